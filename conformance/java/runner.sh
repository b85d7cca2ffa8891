#!/bin/sh
# //conformance/java:runner — starts the Java runner (runner_jvm, the
# launcher of tools/bazel/java.bzl) with ZLINK_JAVA_PL_NATIVE naming the
# PL cases' test library (native/pl_native.c) and ZLINK_JQ08_JNI naming
# JQ-08's (native/jq08_jni.c); every argument is passed on.
set -eu
here=$(dirname "$0")
for d in "${RUNFILES_DIR:-}" "$0.runfiles" "$here/runner.runfiles"; do
    if [ -n "$d" ] && [ -x "$d/zlink/conformance/java/runner_jvm" ]; then
        RUNFILES_DIR=$(cd "$d" && pwd)
        export RUNFILES_DIR
        ZLINK_JAVA_PL_NATIVE=$RUNFILES_DIR/zlink/conformance/java/libzlink_pl_test.so
        export ZLINK_JAVA_PL_NATIVE
        ZLINK_JQ08_JNI=$RUNFILES_DIR/zlink/conformance/java/native/libjq08_jni.so
        export ZLINK_JQ08_JNI
        exec "$RUNFILES_DIR/zlink/conformance/java/runner_jvm" "$@"
    fi
done
echo "ERROR runner: cannot find conformance/java/runner_jvm in the runfiles of $0" >&2
exit 2
