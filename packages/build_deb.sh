#!/usr/bin/env bash
# build_deb.sh — builds the C package, libzlink<MAJOR>-dev_<VERSION>_amd64.deb
# (packages/README.md). Run by the genrule //packages:zlink_c; needs no root
# (dpkg-deb --root-owner-group) and no network.
#
#   build_deb.sh OUT.deb LIBZLINK_SO VERSION ZLINK_PC_IN HEADER...
#
# HEADER... are the public headers (//abi:public_headers), each installed
# under /usr/include by its path below abi/include/ (zlink.h,
# zlink/framework.h); zlink.h must be one of them. The header-only C++
# binding's headers (//bindings/cpp:sources) may be among them too, each
# installed by its path below bindings/cpp/include/ (zlink/zlink.hpp, ...).
# LIBZLINK_SO is the plain (unsanitized) libzlink.so.<MAJOR>, installed
# unstripped as libzlink.so.<VERSION> with the SONAME link and the dev link.
# VERSION must be the one zlink.h defines (checked here). The Depends field
# comes from dpkg-shlibdeps, i.e. from the libuv and libc the library was
# linked against on this machine. Timestamps are fixed (SOURCE_DATE_EPOCH),
# so the same inputs give the same bytes.
set -euo pipefail

if [ "$#" -lt 5 ]; then
    echo "usage: build_deb.sh OUT.deb LIBZLINK_SO VERSION ZLINK_PC_IN HEADER..." >&2
    exit 2
fi
die() {
    echo "build_deb.sh: $*" >&2
    exit 1
}
abs() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
out=$(abs "$1")
lib=$(abs "$2")
version=$3
pc_in=$(abs "$4")
shift 4
headers=()
header_dest=()
zlink_h=
for h in "$@"; do
    case "$h" in
        */abi/include/* | abi/include/*) rel=${h##*abi/include/} ;;
        */bindings/cpp/include/zlink/*.hpp | bindings/cpp/include/zlink/*.hpp) rel=${h##*bindings/cpp/include/} ;;
        *) die "$h is not under abi/include/ (nor a C++ header under bindings/cpp/include/zlink/)" ;;
    esac
    headers+=("$(abs "$h")")
    header_dest+=("$rel")
    [ "$rel" != zlink.h ] || zlink_h=$(abs "$h")
done
[ -n "$zlink_h" ] || die "zlink.h is not among the headers"

# The version the header defines, which is the one the package must carry.
macro() { sed -n "s/^#define $1 \([0-9][0-9]*\)\$/\1/p" "$zlink_h"; }
header_version="$(macro ZLINK_VERSION_MAJOR).$(macro ZLINK_VERSION_MINOR).$(macro ZLINK_VERSION_PATCH)"
[ "$header_version" = "$version" ] ||
    die "version $version is not the one zlink.h defines ($header_version)"
major=${version%%.*}

arch=amd64
multiarch=x86_64-linux-gnu
package=libzlink${major}-dev
soname=libzlink.so.$major

# The library must be what the file name promises.
# (grep reads all its input here, never -q: with pipefail, readelf killed
# by SIGPIPE after an early match would turn the match into a miss.)
readelf -h "$lib" | grep 'Machine:.*X86-64' >/dev/null || die "$lib is not an x86-64 object"
readelf -d "$lib" | grep "(SONAME).*\[$soname\]" >/dev/null || die "$lib has no SONAME $soname"
if readelf -d --dyn-syms -W "$lib" | grep -E '__(asan|tsan|ubsan)_|lib(asan|tsan|ubsan)\.so' >/dev/null; then
    die "$lib is built with a sanitizer; the package carries the plain build"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# dpkg-shlibdeps wants the Debian source layout: debian/control and the
# package's tree under debian/<package>/.
root=$work/debian/$package
libdir=$root/usr/lib/$multiarch
mkdir -p "$root/DEBIAN" "$root/usr/include" "$libdir/pkgconfig"

for i in "${!headers[@]}"; do
    dest=$root/usr/include/${header_dest[$i]}
    [ ! -e "$dest" ] || die "two headers install as /usr/include/${header_dest[$i]}"
    install -D -m 0644 "${headers[$i]}" "$dest"
done
cpp_headers=$(cd "$root/usr/include" && find zlink -name '*.hpp' | wc -l)
install -m 0644 "$lib" "$libdir/libzlink.so.$version"
ln -s "libzlink.so.$version" "$libdir/$soname"
ln -s "$soname" "$libdir/libzlink.so"
sed -e "s|@VERSION@|$version|g" -e "s|@MULTIARCH@|$multiarch|g" "$pc_in" >"$libdir/pkgconfig/zlink.pc"
chmod 0644 "$libdir/pkgconfig/zlink.pc"
if grep -q '@[A-Z]*@' "$libdir/pkgconfig/zlink.pc"; then
    die "zlink.pc: a placeholder is left"
fi

# Depends: the libc6 and libuv1 versions the library needs (their shlibs
# and symbols files on this machine).
printf 'Source: zlink\n\nPackage: %s\nArchitecture: %s\n' "$package" "$arch" >"$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O "debian/$package/usr/lib/$multiarch/libzlink.so.$version")
depends=${depends#shlibs:Depends=}
case "$depends" in *libuv1*) ;; *) die "dpkg-shlibdeps found no libuv1 dependency: '$depends'" ;; esac

installed_kb=$(du -s -k --apparent-size --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<EOF
Package: $package
Version: $version
Architecture: $arch
Section: libdevel
Priority: optional
Maintainer: ZLink project <zlink@example.invalid>
Installed-Size: $installed_kb
Depends: $depends
Suggests: nlohmann-json3-dev
Description: ZLink messaging runtime (C library, headers, pkg-config file)
 ZLink is a messaging runtime written in C on libuv: Core sockets (PAIR,
 DEALER, ROUTER, PUB, SUB, STREAM) and a service framework (hosts,
 ClientServer and RouteMesh channels, calls with exactly-once completion).
 This package holds the shared library $soname (with debug info), the
 public headers zlink.h and zlink/framework.h, and zlink.pc for pkg-config.
 .
 It also holds the header-only C++20 binding over the same library
 ($cpp_headers headers, zlink/*.hpp); only zlink/json.hpp needs
 nlohmann-json3-dev.
EOF
(cd "$root" && find usr -type f | LC_ALL=C sort | xargs md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
find "$root" -type d -exec chmod 0755 {} +

export SOURCE_DATE_EPOCH=1767225600 # 2026-01-01T00:00:00Z
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
dpkg-deb --root-owner-group -Zxz --build "$root" "$out" >/dev/null
