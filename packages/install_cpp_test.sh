#!/usr/bin/env bash
# install_cpp_test.sh — //packages:install_cpp: the C++ binding as the C
# package ships it (header-only: /usr/include/zlink/*.hpp beside zlink.h),
# used the way a user would, with no Bazel between the package and the
# program.
#
#   install_cpp_test.sh C_DEB ECHO_SERVER README.md INSTALL_TEST_LIB HPP...
#
# 1. the package is unpacked with `dpkg -x` into a fresh prefix; every
#    header of the binding (HPP..., bindings/cpp/include/zlink/*.hpp) is in
#    its usr/include/zlink/, byte for byte;
# 2. the block of packages/README.md after the marker
#    "<!-- install_cpp: hello.cc -->" is written into a fresh project
#    directory and built with
#    `c++ -std=c++20 -Wall -Wextra -Werror ... $(pkg-config --cflags --libs zlink)`
#    plus the rpath, with PKG_CONFIG_PATH naming the prefix's pkgconfig
#    directory; `ldd` resolves libzlink.so.1 to the prefix's library;
# 3. it runs against //packages:echo_server: it prints the reply, exits 0
#    and the server counts one request.
set -euo pipefail

[ "$#" -ge 5 ] || { echo "usage: install_cpp_test.sh DEB SERVER README LIB HPP..." >&2; exit 2; }
deb=$(realpath "$1")
server=$(realpath "$2")
readme=$(realpath "$3")
# shellcheck source=install_test_lib.sh
source "$4"
shift 4
unset LD_LIBRARY_PATH LD_PRELOAD

# ---------------------------------------------------------------- 1. the headers
work=$(zpk_tmp)
prefix=$work/prefix
dpkg-deb -x "$deb" "$prefix" || zpk_fail "dpkg-deb -x $deb failed"
n=0
for h in "$@"; do
    installed=$prefix/usr/include/zlink/$(basename "$h")
    [ -f "$installed" ] || zpk_fail "the package has no usr/include/zlink/$(basename "$h")"
    cmp -s "$h" "$installed" || zpk_fail "usr/include/zlink/$(basename "$h") differs from $h"
    n=$((n + 1))
done
echo "install_cpp: the package carries the binding's $n headers in usr/include/zlink/"

# ------------------------------------------------------- 2. a fresh project
libdir=$prefix/usr/lib/x86_64-linux-gnu
export PKG_CONFIG_PATH=$libdir/pkgconfig
project=$work/hello
mkdir -p "$project"
awk '/<!-- install_cpp: hello.cc -->/ {on = 1; next}
     on && /^```cpp/ {inside = 1; next}
     inside && /^```/ {exit}
     inside {print}' "$readme" >"$project/hello.cc"
[ -s "$project/hello.cc" ] || zpk_fail "no hello.cc block after the install_cpp marker in $readme"
flags=$(pkg-config --cflags --libs zlink) || zpk_fail "pkg-config --cflags --libs zlink failed"
# shellcheck disable=SC2086
(cd "$project" && c++ -std=c++20 -Wall -Wextra -Werror -o hello hello.cc $flags \
    -Wl,-rpath,"$(pkg-config --variable=libdir zlink)") ||
    zpk_fail "c++ -std=c++20 \$(pkg-config --cflags --libs zlink) failed on the README's example"
resolved=$(ldd "$project/hello" | awk '$1 == "libzlink.so.1" {print $3}')
[ -n "$resolved" ] && [ "$(realpath "$resolved")" = "$(realpath "$libdir/libzlink.so.1")" ] ||
    zpk_fail "ldd resolves libzlink.so.1 to '$resolved', not the prefix's $libdir/libzlink.so.1"
echo "install_cpp: built hello.cc with c++ -std=c++20 $flags"

# ------------------------------------------------------- 3. against the server
zpk_server_start "$server"
out=$(timeout "$(zpk_bound 60)" "$project/hello" "$ZPK_ENDPOINT") || zpk_fail "the example failed: '$out'"
[ "$out" = "reply: hello, zlink" ] || zpk_fail "the example printed '$out', not 'reply: hello, zlink'"
zpk_server_stop eof 1
echo "install_cpp: ok ($out)"
