#!/usr/bin/env bash
# install_c_test.sh — //packages:install_c: the C package, installed and used
# the way a user would, with no Bazel between the package and the program.
#
#   install_c_test.sh PACKAGE.deb ECHO_SERVER README.md INSTALL_TEST_LIB ZLINK_MAP
#
# 1. the package's control fields, and its files unpacked with dpkg -x into
#    a fresh prefix: exactly the expected files, the SONAME and dev links,
#    a library with debug info and no sanitizer runtime that exports
#    exactly the names of zlink.map, each with its version node;
# 2. pkg-config, through PKG_CONFIG_PATH only, finds that prefix's zlink.pc
#    with the header's version;
# 3. the example of packages/README.md (the block after the marker
#    "<!-- install_c: hello.c -->") is written into a fresh project
#    directory and built with `cc hello.c $(pkg-config --cflags --libs zlink)`
#    plus an rpath to pkg-config's libdir; its libzlink.so.1 must resolve
#    to the prefix's library, with LD_LIBRARY_PATH unset;
# 4. it runs against //packages:echo_server (stopped by stdin EOF), prints
#    the reply, and the server counts one request; then again against a
#    server stopped by SIGTERM.
set -euo pipefail

[ "$#" -eq 5 ] || { echo "usage: install_c_test.sh PACKAGE.deb ECHO_SERVER README.md LIB ZLINK_MAP" >&2; exit 2; }
deb=$(realpath "$1")
server=$(realpath "$2")
readme=$(realpath "$3")
map=$(realpath "$5")
# shellcheck source=install_test_lib.sh
source "$4"
unset LD_LIBRARY_PATH LD_PRELOAD PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR

multiarch=x86_64-linux-gnu

# ------------------------------------------------------------ 1. the package
field() { dpkg-deb --field "$deb" "$1"; }
package=$(field Package)
version=$(field Version)
major=${version%%.*}
[ "$package" = "libzlink${major}-dev" ] || zpk_fail "Package is '$package', not libzlink${major}-dev"
[ "$(field Architecture)" = amd64 ] || zpk_fail "Architecture is '$(field Architecture)'"
[ "$(basename "$deb")" = "${package}_${version}_amd64.deb" ] ||
    zpk_fail "the file name $(basename "$deb") does not match its fields"
case "$(field Depends)" in
    *libuv1*) ;;
    *) zpk_fail "Depends does not name libuv1: '$(field Depends)'" ;;
esac

prefix=$(zpk_tmp)/prefix
dpkg-deb -x "$deb" "$prefix"
libdir=$prefix/usr/lib/$multiarch
real=libzlink.so.$version

# Exactly these files and links, nothing more.
expected="usr/include/zlink.h
usr/include/zlink/core.hpp
usr/include/zlink/errors.hpp
usr/include/zlink/framework.h
usr/include/zlink/framework.hpp
usr/include/zlink/json.hpp
usr/include/zlink/tables.hpp
usr/include/zlink/zlink.hpp
usr/lib/$multiarch/libzlink.so
usr/lib/$multiarch/libzlink.so.$major
usr/lib/$multiarch/$real
usr/lib/$multiarch/pkgconfig/zlink.pc"
got=$(cd "$prefix" && find . \( -type f -o -type l \) | sed 's|^\./||' | LC_ALL=C sort)
[ "$got" = "$expected" ] || zpk_fail "the package's files differ from the expected list:
$(diff <(echo "$expected") <(echo "$got") || true)"

# (grep reads all its input here, never -q: with pipefail, readelf killed
# by SIGPIPE after an early match would turn the match into a miss.)
[ -f "$libdir/$real" ] && [ ! -L "$libdir/$real" ] || zpk_fail "$real is not a regular file"
[ "$(readlink "$libdir/libzlink.so.$major")" = "$real" ] || zpk_fail "libzlink.so.$major does not link to $real"
[ "$(readlink "$libdir/libzlink.so")" = "libzlink.so.$major" ] || zpk_fail "libzlink.so does not link to libzlink.so.$major"
readelf -d "$libdir/$real" | grep "(SONAME).*\[libzlink.so.$major\]" >/dev/null || zpk_fail "$real has no SONAME libzlink.so.$major"
readelf -S -W "$libdir/$real" | grep ' \.debug_info ' >/dev/null || zpk_fail "$real carries no debug info"
if readelf -d --dyn-syms -W "$libdir/$real" | grep -E '__(asan|tsan|ubsan)_|lib(asan|tsan|ubsan)\.so' >/dev/null; then
    zpk_fail "$real is a sanitizer build; the package must carry the plain one"
fi
# The exports: name@@node for each name of the version script, no other.
want_syms=$(awk '/^ZLINK_[0-9.]+ *[{]/ { node = $1 }
                 /^ *zlink_[a-z0-9_]+;/ { gsub(/[ ;]/, ""); print $0 "@@" node }' "$map" | LC_ALL=C sort)
got_syms=$(readelf --dyn-syms -W "$libdir/$real" | awk '$7 != "UND" && $8 ~ /^zlink_/ { print $8 }' | LC_ALL=C sort)
[ -n "$want_syms" ] || zpk_fail "no symbol read from $map"
[ "$got_syms" = "$want_syms" ] || zpk_fail "the library's exports differ from zlink.map (< map, > library):
$(diff <(echo "$want_syms") <(echo "$got_syms") || true)"

# The version of the installed header is the package's version.
macro() { sed -n "s/^#define $1 \([0-9][0-9]*\)\$/\1/p" "$prefix/usr/include/zlink.h"; }
hver="$(macro ZLINK_VERSION_MAJOR).$(macro ZLINK_VERSION_MINOR).$(macro ZLINK_VERSION_PATCH)"
[ "$hver" = "$version" ] || zpk_fail "zlink.h says $hver, the package $version"
echo "ok: $(basename "$deb") ($(field Depends)) unpacked into $prefix: $(echo "$got" | wc -l) files and links as expected, $(echo "$got_syms" | wc -l) exports as zlink.map says"

# ------------------------------------------------------------ 2. pkg-config
export PKG_CONFIG_PATH=$libdir/pkgconfig
[ "$(pkg-config --modversion zlink)" = "$version" ] || zpk_fail "pkg-config --modversion zlink: '$(pkg-config --modversion zlink)'"
pc_libdir=$(pkg-config --variable=libdir zlink)
[ "$(realpath "$pc_libdir")" = "$(realpath "$libdir")" ] ||
    zpk_fail "pkg-config's libdir $pc_libdir is not the prefix's $libdir"
[ "$(realpath "$(pkg-config --variable=includedir zlink)")" = "$(realpath "$prefix/usr/include")" ] ||
    zpk_fail "pkg-config's includedir is not the prefix's"
case " $(pkg-config --static --libs zlink) " in
    *" -luv "*) ;;
    *) zpk_fail "pkg-config --static --libs zlink does not name -luv: $(pkg-config --static --libs zlink)" ;;
esac
echo "ok: pkg-config zlink $version: $(pkg-config --cflags --libs zlink)"

# ------------------------------------------------------------ 3. a project
project=$(zpk_tmp)/hello
mkdir -p "$project"
awk 'found == 2 && /^```/ { exit }
     found == 2 { print }
     found == 1 && /^```c$/ { found = 2 }
     /^<!-- install_c: hello.c -->$/ { found = 1 }' "$readme" >"$project/hello.c"
[ -s "$project/hello.c" ] || zpk_fail "README.md has no C block after '<!-- install_c: hello.c -->'"
grep -q 'zlink_call_wait' "$project/hello.c" || zpk_fail "the extracted example is not the request example"

cd "$project"
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -Wall -Wextra -Werror -o hello hello.c $(pkg-config --cflags --libs zlink) -Wl,-rpath,"$pc_libdir" ||
    zpk_fail "the example does not build with pkg-config's flags"

readelf -d hello | grep '(NEEDED).*\[libzlink.so.1\]' >/dev/null || zpk_fail "hello does not need libzlink.so.1"
resolved=$(ldd ./hello | awk '$1 == "libzlink.so.1" { print $3 }')
[ -n "$resolved" ] || zpk_fail "ldd does not resolve libzlink.so.1: $(ldd ./hello)"
[ "$(realpath "$resolved")" = "$(realpath "$libdir/$real")" ] ||
    zpk_fail "hello loads $resolved, not the prefix's $libdir/$real"
echo "ok: $(wc -l <hello.c)-line hello.c built; it loads libzlink.so.1 from $resolved"

# ------------------------------------------------------------ 4. a request
run_hello() {
    local out rc=0
    out=$(timeout "$(zpk_bound 60)" ./hello "$ZPK_ENDPOINT") || rc=$?
    [ "$rc" -eq 0 ] || zpk_fail "hello exited with status $rc; it printed: '$out'"
    [ "$out" = "reply: hello, zlink" ] || zpk_fail "hello printed '$out', not 'reply: hello, zlink'"
    echo "ok: ./hello $ZPK_ENDPOINT printed '$out'"
}

zpk_server_start "$server"
run_hello
zpk_server_stop eof 1
echo "ok: echo_server stopped on stdin EOF, served 1"

zpk_server_start "$server"
run_hello
zpk_server_stop term 1
echo "ok: echo_server stopped on SIGTERM, served 1"

echo "PASS: $package $version installed into a fresh prefix; the example built with pkg-config got its reply from echo_server (stdin EOF and SIGTERM stops)"
