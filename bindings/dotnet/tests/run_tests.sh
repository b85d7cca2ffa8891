#!/bin/bash
# run_tests.sh LIBZLINK LAYOUT_JSON FILE... — //bindings/dotnet:tests: copies the
# binding and its xunit project out of the runfiles, restores them offline
# from /opt/nuget/packages and runs `dotnet test` against the plain
# libzlink.so.1 (ZLINK_LIBRARY) and the C header's layout (ZLINK_LAYOUT_JSON).
set -euo pipefail
lib=$(readlink -f "$1"); layout=$(readlink -f "$2"); shift 2
work="${TEST_TMPDIR:-$(mktemp -d)}/dotnet"
. bindings/dotnet/tools/dotnet_env.sh
zl_dotnet_env "$work"
zl_copy_tree "$work/tree" "$@"
proj="$work/tree/bindings/dotnet/tests/ZLink.Tests/ZLink.Tests.csproj"
dotnet restore "$proj" --source "$ZL_NUGET_SOURCE" -nologo -v q
export ZLINK_LIBRARY="$lib" ZLINK_LAYOUT_JSON="$layout"
results="${TEST_UNDECLARED_OUTPUTS_DIR:-$work}"
exec dotnet test "$proj" --no-restore -nologo -v q \
    --logger "console;verbosity=normal" --logger "trx;LogFileName=$results/dotnet-tests.trx"
