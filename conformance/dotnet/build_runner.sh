#!/bin/bash
# build_runner.sh OUT_TAR FILE... — the genrule of //conformance/dotnet:runner_app:
# builds the console runner (and the binding it references) offline and
# packs the build output into OUT_TAR.
set -euo pipefail
out=$(readlink -f "$(dirname "$1")")/$(basename "$1"); shift
work=$(mktemp -d "${TMPDIR:-/tmp}/zlink-dotnet-runner.XXXXXX")
trap 'rm -rf "$work"' EXIT
. bindings/dotnet/tools/dotnet_env.sh
zl_dotnet_env "$work"
zl_copy_tree "$work/tree" "$@"
proj="$work/tree/conformance/dotnet/Runner/Runner.csproj"
dotnet restore "$proj" --source "$ZL_NUGET_SOURCE" -nologo -v q
dotnet build "$proj" --no-restore -nologo -v q -c Release -o "$work/app"
tar -C "$work/app" -cf "$out" .
