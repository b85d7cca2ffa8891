#!/usr/bin/env bash
# install_java_test.sh — //packages:install_java: the Java package (the jar
# and its pom), used the way a user would, with no Bazel between the
# package and the program.
#
#   install_java_test.sh ZLINK_JAR POM ECHO_SERVER README.md INSTALL_TEST_LIB ZLINK_H
#
# 1. the pom names io.zlink:zlink at the header's version and depends on
#    Jackson; the jar holds the io.zlink classes and the native libraries
#    for linux-x86_64, and no sanitizer runtime is linked into them;
# 2. the example of packages/README.md (the block after the marker
#    "<!-- install_java: Hello.java -->") is written into a fresh project
#    directory beside a copy of the jar, compiled with `javac -cp` against
#    the jar and Debian's Jackson, and run with `java -cp` against
#    //packages:echo_server: it prints the reply and the server counts one
#    request.
set -euo pipefail

[ "$#" -eq 6 ] || { echo "usage: install_java_test.sh JAR POM SERVER README LIB ZLINK_H" >&2; exit 2; }
jar=$(realpath "$1")
pom=$(realpath "$2")
server=$(realpath "$3")
readme=$(realpath "$4")
header=$(realpath "$6")
# shellcheck source=install_test_lib.sh
source "$5"
unset LD_LIBRARY_PATH LD_PRELOAD

version=$(awk '/#define ZLINK_VERSION_(MAJOR|MINOR|PATCH) /{v = v (v ? "." : "") $3} END {print v}' "$header")
[ -n "$version" ] || zpk_fail "no version in $header"

# ---------------------------------------------------------------- 1. the package
grep -q "<groupId>io.zlink</groupId>" "$pom" || zpk_fail "the pom's groupId is not io.zlink"
grep -q "<artifactId>zlink</artifactId>" "$pom" || zpk_fail "the pom's artifactId is not zlink"
grep -q "<version>$version</version>" "$pom" || zpk_fail "the pom's version is not the header's $version"
grep -q "<artifactId>jackson-databind</artifactId>" "$pom" || zpk_fail "the pom does not depend on Jackson"
listing=$(jar tf "$jar")
for f in io/zlink/Host.class io/zlink/native/linux-x86_64/libzlink.so.1 \
         io/zlink/native/linux-x86_64/libzlink_jni.so; do
    grep -qxF "$f" <<<"$listing" || zpk_fail "the jar has no $f"
done
echo "install_java: the pom is io.zlink:zlink:$version; the jar holds the classes and both native libraries"

# ------------------------------------------------------- 2. a fresh project
project=$(zpk_tmp)/hello
mkdir -p "$project/lib"
cp "$jar" "$project/lib/zlink-$version.jar"
awk '/<!-- install_java: Hello.java -->/ {on = 1; next}
     on && /^```java/ {inside = 1; next}
     inside && /^```/ {exit}
     inside {print}' "$readme" >"$project/Hello.java"
[ -s "$project/Hello.java" ] || zpk_fail "no Hello.java block after the install_java marker in $readme"
export HOME=$project
jackson=/usr/share/java/jackson-databind.jar:/usr/share/java/jackson-core.jar:/usr/share/java/jackson-annotations.jar
cp_line="lib/zlink-$version.jar:$jackson"
(cd "$project" && javac -Werror -cp "$cp_line" Hello.java) || zpk_fail "javac -cp failed on the README's example"
echo "install_java: built Hello.java with javac -cp $cp_line"

zpk_server_start "$server"
out=$(cd "$project" && timeout "$(zpk_bound 60)" java -Djava.io.tmpdir="$project" -cp "$cp_line:." Hello "$ZPK_ENDPOINT") ||
    zpk_fail "the example failed: '$out'"
[ "$out" = "reply: hello, zlink" ] || zpk_fail "the example printed '$out', not 'reply: hello, zlink'"
zpk_server_stop eof 1
echo "install_java: ok ($out)"
