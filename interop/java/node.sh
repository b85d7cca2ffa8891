#!/bin/sh
# node.sh ROLE ARGS... — the Java interop participant (Node.java) on the JVM,
# with the binding's jar from the runfiles (interop/BUILD).
set -eu
here=$(dirname "$0")
find_file() {
    for d in "${RUNFILES_DIR:-$0.runfiles}/zlink" "$0.runfiles/zlink" "$here/../.."; do
        if [ -f "$d/$1" ]; then
            echo "$d/$1"
            return 0
        fi
    done
    echo "node.sh: cannot find $1" >&2
    exit 2
}
node=$(find_file interop/java/interop-java.jar)
jar=$(find_file bindings/java/zlink.jar)
jackson=/usr/share/java/jackson-databind.jar:/usr/share/java/jackson-core.jar:/usr/share/java/jackson-annotations.jar
tmp=${TEST_TMPDIR:-${TMPDIR:-/tmp}}
export HOME="${HOME:-$tmp}"
exec /usr/bin/java -Djava.io.tmpdir="$tmp" -cp "$node:$jar:$jackson" io.zlink.interop.Node "$@"
