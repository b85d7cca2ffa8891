#!/bin/sh
# framework_java.sh server | client ... — the benchmark's Java program
# (java/Bench.java) on the JVM, with the binding's jar from the runfiles.
set -eu
here=$(dirname "$0")
find_file() {
    for d in "${RUNFILES_DIR:-$0.runfiles}/zlink" "$0.runfiles/zlink" "$here/framework.runfiles/zlink" "$here/.."; do
        if [ -f "$d/$1" ]; then
            echo "$d/$1"
            return 0
        fi
    done
    echo "ERROR,framework_java.sh: cannot find $1"
    exit 1
}
bench=$(find_file bench/bench-java.jar)
jar=$(find_file bindings/java/zlink.jar)
jackson=/usr/share/java/jackson-databind.jar:/usr/share/java/jackson-core.jar:/usr/share/java/jackson-annotations.jar
tmp=${TEST_TMPDIR:-${TMPDIR:-/tmp}}
exec /usr/bin/java -Djava.io.tmpdir="$tmp" -cp "$bench:$jar:$jackson" io.zlink.bench.Bench "$@"
