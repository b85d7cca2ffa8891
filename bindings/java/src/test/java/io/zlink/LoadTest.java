package io.zlink;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import org.junit.jupiter.api.Test;

/** The load check: the library found, its major version, the export list. */
class LoadTest {
    @Test
    void loadsLibzlinkAndReportsThePath() {
        assertTrue(ZLink.loadedLibraryPath().getFileName().toString().equals("libzlink.so.1"),
                   ZLink.loadedLibraryPath().toString());
        assertTrue(Files.isRegularFile(ZLink.loadedLibraryPath()));
    }

    @Test
    void majorVersionMatchesTheTable() {
        assertEquals(Tables.MAJOR, ZLink.version()[0]);
        assertEquals(Tables.MINOR, ZLink.version()[1]);
    }

    @Test
    void everyGeneratedExportResolves() {
        assertTrue(Tables.EXPORTS.length > 100);
        ZLink.checkExports(Tables.EXPORTS);
    }

    @Test
    void aMissingExportFailsWithItsName() {
        ZLinkLoadException e = assertThrows(ZLinkLoadException.class,
            () -> ZLink.checkExports("zlink_version", "zlink_no_such_function", "zlink_close"));
        assertTrue(e.getMessage().contains("zlink_no_such_function"), e.getMessage());
    }

    @Test
    void errorKindsComeFromTheTable() {
        for (Tables.ErrorKind k : Tables.ErrorKind.values()) {
            assertEquals(k, Tables.ErrorKind.ofResult(k.result()));
            assertEquals(Native.errorKindName(k.value()), k.displayName());
            assertEquals(Native.resultName(k.result()), "ZLINK_FW_" + k.name());
        }
        assertNull(Tables.ErrorKind.ofResult(Tables.FW_CANCELLED));
    }
}
