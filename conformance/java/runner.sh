#!/bin/sh
# runner.sh [-v] MANIFEST [ID...] | --check MANIFEST | --list MANIFEST —
# starts the JVM with the binding's jar and the runner's classes; the
# runner itself starts a JVM per case.
set -eu
here=$(dirname "$0")
find_file() {
    for d in "${RUNFILES_DIR:-$0.runfiles}/zlink" "$0.runfiles/zlink" "$here/../.."; do
        if [ -f "$d/$1" ]; then
            echo "$d/$1"
            return 0
        fi
    done
    echo "runner.sh: cannot find $1" >&2
    exit 2
}
conf=$(find_file conformance/java/zlink-conformance.jar)
jar=$(find_file bindings/java/zlink.jar)
jackson=/usr/share/java/jackson-databind.jar:/usr/share/java/jackson-core.jar:/usr/share/java/jackson-annotations.jar
tmp=${TEST_TMPDIR:-${TMPDIR:-/tmp}}
export HOME="${HOME:-$tmp}"
exec /usr/bin/java -Djava.io.tmpdir="$tmp" -cp "$conf:$jar:$jackson" io.zlink.conformance.Runner "$@"
