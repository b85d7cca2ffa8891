using System;
using System.Linq;
using System.Runtime.InteropServices;
using Xunit;

namespace ZLink.Tests;

public class LoadTests
{
    private static nint Lib() => NativeLibrary.Load(Environment.GetEnvironmentVariable(NativeLibraryLoader.EnvironmentVariable)
        ?? throw new InvalidOperationException("ZLINK_LIBRARY is not set"));

    [Fact]
    public void Loads_and_major_matches_the_table()
    {
        Assert.Equal(AbiTable.Major, NativeLibraryLoader.LibraryVersion.Major);
        Assert.True(AbiTable.Exports.Length > 100);
        NativeLibraryLoader.Check(Lib(), AbiTable.Major, AbiTable.Exports);   // every export resolves
    }

    [Fact]
    public void A_missing_export_fails_with_its_name()
    {
        var exports = AbiTable.Exports.Concat(new[] { ("zlink_no_such_function", "ZLINK_1.9") }).ToArray();
        var e = Assert.Throws<ZLinkLoadException>(() => NativeLibraryLoader.Check(Lib(), AbiTable.Major, exports));
        Assert.Equal("zlink_no_such_function", e.MissingExport);
        Assert.Contains("zlink_no_such_function", e.Message);
    }

    [Fact]
    public void Another_major_fails()
    {
        var e = Assert.Throws<ZLinkLoadException>(() => NativeLibraryLoader.Check(Lib(), AbiTable.Major + 1, AbiTable.Exports));
        Assert.Null(e.MissingExport);
        Assert.Contains("major", e.Message);
    }

    [Fact]
    public void Error_kinds_come_from_the_table_by_name()
    {
        Assert.Equal(ErrorKind.NotFound, ErrorKinds.FromResult(Results.Framework.NotFound));
        Assert.Equal(ErrorKind.InternalFailure, ErrorKinds.FromResult(Results.Framework.InternalFailure));
        Assert.Null(ErrorKinds.FromResult(Results.Framework.Cancelled));
        Assert.Equal(13, Enum.GetValues<ErrorKind>().Length);
    }
}
