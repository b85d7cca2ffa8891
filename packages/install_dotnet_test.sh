#!/usr/bin/env bash
# install_dotnet_test.sh — //packages:install_dotnet: the .NET package (the
# nupkg), used the way a user would, with no Bazel between the package and
# the program.
#
#   install_dotnet_test.sh NUPKG ECHO_SERVER README.md INSTALL_TEST_LIB ZLINK_H DOTNET_ENV
#
# 1. the nupkg is ZLink at the header's version and holds lib/net10.0/ZLink.dll
#    and the plain runtimes/linux-x64/native/libzlink.so.1 (no sanitizer
#    runtime linked into it);
# 2. a fresh console project (`dotnet new console`) in $TEST_TMPDIR takes
#    it with `dotnet add package ZLink --source <a local feed holding only
#    the nupkg>` (the project's nuget.config names that feed and
#    /opt/nuget/packages, offline, for the rest; nuget.org removed); its
#    Program.cs is the block of packages/README.md after the marker
#    "<!-- install_dotnet: Program.cs -->"; it is built, and run with no
#    ZLINK_LIBRARY against //packages:echo_server: it prints the reply
#    and the server counts one request.
# HOME, DOTNET_CLI_HOME and NUGET_PACKAGES are under $TEST_TMPDIR.
set -euo pipefail

[ "$#" -eq 6 ] || { echo "usage: install_dotnet_test.sh NUPKG SERVER README LIB ZLINK_H DOTNET_ENV" >&2; exit 2; }
nupkg=$(realpath "$1")
server=$(realpath "$2")
readme=$(realpath "$3")
header=$(realpath "$5")
# shellcheck source=install_test_lib.sh
source "$4"
# shellcheck source=../bindings/dotnet/tools/dotnet_env.sh
source "$6"
unset LD_LIBRARY_PATH LD_PRELOAD ZLINK_LIBRARY

version=$(awk '/#define ZLINK_VERSION_(MAJOR|MINOR|PATCH) /{v = v (v ? "." : "") $3} END {print v}' "$header")
[ -n "$version" ] || zpk_fail "no version in $header"

# ---------------------------------------------------------------- 1. the package
[ "$(basename "$nupkg")" = "ZLink.$version.nupkg" ] || zpk_fail "the nupkg is $(basename "$nupkg"), not ZLink.$version.nupkg"
listing=$(unzip -Z1 "$nupkg") || zpk_fail "the nupkg is not a zip archive"
for f in ZLink.nuspec lib/net10.0/ZLink.dll runtimes/linux-x64/native/libzlink.so.1; do
    grep -qxF "$f" <<<"$listing" || zpk_fail "the nupkg has no $f"
done
nuspec=$(unzip -p "$nupkg" ZLink.nuspec)
grep -q "<id>ZLink</id>" <<<"$nuspec" || zpk_fail "the nuspec's id is not ZLink"
grep -q "<version>$version</version>" <<<"$nuspec" || zpk_fail "the nuspec's version is not the header's $version"
work=$(zpk_tmp)
unzip -p "$nupkg" runtimes/linux-x64/native/libzlink.so.1 >"$work/libzlink.so.1"
if readelf -d "$work/libzlink.so.1" | grep -E 'NEEDED.*lib(a|t|ub|l)san'; then
    zpk_fail "the nupkg's libzlink.so.1 links a sanitizer runtime"
fi
echo "install_dotnet: the nupkg is ZLink $version with ZLink.dll and the plain libzlink.so.1"

# ------------------------------------------------------- 2. a fresh project
zl_dotnet_env "$work"
mkdir -p "$work/feed"
cp "$nupkg" "$work/feed/"
project=$work/hello
(cd "$work" && dotnet new console -o hello --no-update-check >"$work/new.log" 2>&1) ||
    { cat "$work/new.log" >&2; zpk_fail "dotnet new console failed"; }
awk '/<!-- install_dotnet: Program.cs -->/ {on = 1; next}
     on && /^```csharp/ {inside = 1; next}
     inside && /^```/ {exit}
     inside {print}' "$readme" >"$project/Program.cs"
[ -s "$project/Program.cs" ] || zpk_fail "no Program.cs block after the install_dotnet marker in $readme"
# The project's own nuget.config: the local feed and the offline copy
# (nuget.org removed), so no restore touches the network.
(cd "$project" && dotnet new nugetconfig >"$work/config.log" 2>&1 &&
    dotnet nuget remove source nuget --configfile nuget.config >>"$work/config.log" 2>&1 &&
    dotnet nuget add source "$work/feed" --name zlink-local --configfile nuget.config >>"$work/config.log" 2>&1 &&
    dotnet nuget add source "$ZL_NUGET_SOURCE" --name offline --configfile nuget.config >>"$work/config.log" 2>&1) ||
    { cat "$work/config.log" >&2; zpk_fail "could not write the project's nuget.config"; }
if grep -q 'nuget\.org' "$project/nuget.config"; then
    zpk_fail "nuget.org is still a source: $(cat "$project/nuget.config")"
fi
(cd "$project" && dotnet add package ZLink --source "$work/feed" >"$work/add.log" 2>&1) ||
    { cat "$work/add.log" >&2; zpk_fail "dotnet add package ZLink failed"; }
grep -q '<PackageReference Include="ZLink" Version="'"$version"'"' "$project/hello.csproj" ||
    zpk_fail "hello.csproj does not reference ZLink $version: $(cat "$project/hello.csproj")"
(cd "$project" && dotnet build -nologo -v q -o "$work/out" >"$work/build.log" 2>&1) ||
    { cat "$work/build.log" >&2; zpk_fail "dotnet build failed on the README's example"; }
[ -f "$work/out/runtimes/linux-x64/native/libzlink.so.1" ] ||
    zpk_fail "the build did not deploy the package's runtimes/linux-x64/native/libzlink.so.1"
echo "install_dotnet: built Program.cs with dotnet add package ZLink --source $work/feed"

zpk_server_start "$server"
out=$(cd "$project" && timeout "$(zpk_bound 60)" dotnet "$work/out/hello.dll" "$ZPK_ENDPOINT") ||
    zpk_fail "the example failed: '$out'"
[ "$out" = "reply: hello, zlink" ] || zpk_fail "the example printed '$out', not 'reply: hello, zlink'"
zpk_server_stop eof 1
echo "install_dotnet: ok ($out)"
