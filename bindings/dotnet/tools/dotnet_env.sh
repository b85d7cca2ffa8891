# dotnet_env.sh — sourced by the .NET binding's Bazel scripts: a writable
# HOME / CLI home / package folder under $1, no telemetry, no first-run
# banner, and the restore source that works offline (/opt/nuget/packages).
# PATH is the strict action env's; dotnet lives in /usr/bin there.
zl_dotnet_env() {
    export HOME="$1/home" DOTNET_CLI_HOME="$1/home" NUGET_PACKAGES="$1/nuget"
    export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
    export DOTNET_GENERATE_ASPNET_CERTIFICATE=false MSBUILDDISABLENODEREUSE=1
    export DOTNET_CLI_WORKLOAD_UPDATE_NOTIFY_DISABLE=1
    mkdir -p "$HOME" "$NUGET_PACKAGES"
    ZL_NUGET_SOURCE=/opt/nuget/packages
    command -v dotnet >/dev/null || { echo "dotnet is not on PATH (run tools/setup.sh)" >&2; exit 1; }
}
# zl_copy_tree SRC... DEST: copies files (dereferencing runfiles symlinks).
zl_copy_tree() {
    dest=$1; shift
    for f in "$@"; do
        mkdir -p "$dest/$(dirname "$f")"
        cp -L "$f" "$dest/$f"
    done
}
