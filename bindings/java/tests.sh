#!/bin/sh
# tests.sh JAR TEST_SOURCES... — compiles the JUnit 5 tests against the
# jar and runs them with the console launcher; fails on any failed test
# (and when no test ran).
set -eu
jar=$1
shift
work=${TEST_TMPDIR:-$(mktemp -d)}/java-tests
rm -rf "$work"
mkdir -p "$work/classes"
export HOME="$work"
jackson=/usr/share/java/jackson-databind.jar:/usr/share/java/jackson-core.jar:/usr/share/java/jackson-annotations.jar
junit=/usr/share/java/junit-platform-console-standalone.jar
/usr/bin/javac -nowarn --release 17 -encoding UTF-8 -cp "$jar:$jackson:$junit" -d "$work/classes" "$@"
exec /usr/bin/java -Djava.io.tmpdir="$work" -jar "$junit" \
    --class-path "$work/classes:$jar:$jackson" \
    --scan-class-path "$work/classes" \
    --fail-if-no-tests --disable-banner --disable-ansi-colors --details=tree
