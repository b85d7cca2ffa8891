#!/bin/bash
# build_app.sh OUT_TAR PROJECT FILE... — a genrule's step: builds the .NET
# console app PROJECT (a .csproj among FILE..., which also holds the binding
# it references) offline, Release, and packs its output into OUT_TAR.
# Used by the programs built on the binding outside its own folder
# (interop/dotnet, bench/dotnet).
set -euo pipefail
out=$(readlink -f "$(dirname "$1")")/$(basename "$1")
project=$2
shift 2
work=$(mktemp -d "${TMPDIR:-/tmp}/zlink-dotnet-app.XXXXXX")
trap 'rm -rf "$work"' EXIT
. bindings/dotnet/tools/dotnet_env.sh
zl_dotnet_env "$work"
zl_copy_tree "$work/tree" "$@"
dotnet restore "$work/tree/$project" --source "$ZL_NUGET_SOURCE" -nologo -v q
dotnet build "$work/tree/$project" --no-restore -nologo -v q -c Release -o "$work/app"
tar -C "$work/app" -cf "$out" .
