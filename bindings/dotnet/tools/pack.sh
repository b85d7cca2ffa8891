#!/bin/bash
# pack.sh OUT LIBZLINK FILE... — //bindings/dotnet:nupkg: `dotnet pack` of
# the binding with libzlink.so.1 in runtimes/linux-x64/native/, offline.
set -euo pipefail
out=$(readlink -f "$(dirname "$1")")/$(basename "$1"); lib=$(readlink -f "$2"); shift 2
work=$(mktemp -d "${TMPDIR:-/tmp}/zlink-pack.XXXXXX")
trap 'rm -rf "$work"' EXIT
. bindings/dotnet/tools/dotnet_env.sh
zl_dotnet_env "$work"
zl_copy_tree "$work/tree" "$@"
proj="$work/tree/bindings/dotnet/src/ZLink/ZLink.csproj"
dotnet restore "$proj" --source "$ZL_NUGET_SOURCE" -nologo -v q
dotnet pack "$proj" --no-restore -nologo -v q -c Release -o "$work/pkg" -p:ZLinkNative="$lib"
cp "$work"/pkg/ZLink.*.nupkg "$out"
