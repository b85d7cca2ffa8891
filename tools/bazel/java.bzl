"""zlink_java_program: a Java program on the Java binding, without java_* rules.

Bazel 4.2.3's java_* rules need downloaded tools (spec D6), so the programs
built on //bindings/java (the conformance runner, the interop participant,
the benchmark) are compiled by a genrule that drives the JDK's javac and
jar, and started by a generated launcher script. One macro for all of them:

    zlink_java_program(
        name = "node",              # the sh_binary: bazel run //pkg:node -- ARGS
        srcs = ["Node.java"],
        main_class = "io.zlink.interop.Node",
        jar = "interop-java.jar",   # the compiled classes, beside the BUILD file
    )

The class path is the program's jar, //bindings/java:zlink_jar (the binding,
native libraries inside) and Debian's Jackson. The launcher finds the jars in
its own runfiles, in the runfiles of a binary that has it as data (a driver
that starts it from its own directory), or beside it in bazel-bin.

`data` are more files of the program's runfiles; `env` sets variables for
the JVM to a runfiles path each, found the same way as the jars and exported
as an absolute path (the value may be `$(rootpath <label>)` of a `data`
label). The variables are written into the launcher, not left to `bazel run`,
so a test or driver that starts the program from its runfiles gets them too
(`jvm_flags`, options put before the class path, are written in the same way):

    zlink_java_program(
        ...,
        data = [":helper_lib"],
        env = {"HELPER_LIB": "$(rootpath :helper_lib)"},
    )
"""

JACKSON = ":".join([
    "/usr/share/java/jackson-databind.jar",
    "/usr/share/java/jackson-core.jar",
    "/usr/share/java/jackson-annotations.jar",
])

_BINDING_JAR = "//bindings/java:zlink_jar"

def _launcher_env(env):
    """env as the launcher's one-line list NAME=PATH ... (no quoting needed)."""
    pairs = []
    for k, v in env.items():
        if not k or not (k[0].isalpha() or k[0] == "_") or not k.replace("_", "a").isalnum():
            fail("env: %r is not a variable name" % k)
        # What the value says outside its $(...) expansions goes into a
        # sed replacement and an unquoted list word.
        literal = v
        for _ in range(v.count("$(")):
            i = literal.find("$(")
            j = literal.find(")", i)
            if j < 0:
                fail("env: the path of %s has an unclosed $(" % k)
            literal = literal[:i] + literal[j + 1:]
        for c in [" ", "\t", "\n", "|", "&", "'", "\\"]:
            if c in literal:
                fail("env: the path of %s holds %r" % (k, c))
        pairs.append("%s=%s" % (k, v))
    return " ".join(pairs)

def _jvm_flags(flags):
    """The JVM options as the launcher's words (no quoting: checked plain)."""
    for f in flags:
        if not f.startswith("-"):
            fail("jvm_flags: %r is not an option" % f)
        for c in [" ", "\t", "\n", "|", "&", "'", "\\", "$", "`", ";", '"']:
            if c in f:
                fail("jvm_flags: %r holds %r" % (f, c))
    return " ".join(flags)

def zlink_java_program(
        name,
        srcs,
        main_class,
        jar,
        data = [],
        env = {},
        jvm_flags = [],
        testonly = False,
        visibility = None):
    native.genrule(
        name = name + "_jar",
        testonly = testonly,
        srcs = srcs + [_BINDING_JAR],
        outs = [jar],
        cmd = """
set -eu
work=$$(mktemp -d "$${TMPDIR:-/tmp}/zlink-javac.XXXXXX")
export HOME=$$work
mkdir -p $$work/classes
/usr/bin/javac -nowarn --release 17 -encoding UTF-8 \\
    -cp $(location %s):%s -d $$work/classes %s
/usr/bin/jar --create --file $@ -C $$work/classes .
rm -rf $$work
""" % (_BINDING_JAR, JACKSON, " ".join(["$(location %s)" % s for s in srcs])),
    )
    pkg = native.package_name()
    template = "//tools/bazel:java_launcher.sh.in"
    native.genrule(
        name = name + "_launcher",
        testonly = testonly,
        # data only for $(rootpath) in the env values.
        srcs = [template] + data,
        outs = [name + "_launcher.sh"],
        cmd = ("sed -e 's|@JAR@|%s/%s|' -e 's|@MAIN@|%s|' -e 's|@JACKSON@|%s|' " +
               "-e 's|@ENV@|%s|' -e 's|@JVM_FLAGS@|%s|' $(location %s) > $@") % (
            pkg,
            jar,
            main_class,
            JACKSON,
            _launcher_env(env),
            _jvm_flags(jvm_flags),
            template,
        ),
    )
    native.sh_binary(
        name = name,
        testonly = testonly,
        srcs = [name + "_launcher.sh"],
        data = [":" + name + "_jar", _BINDING_JAR] + data,
        visibility = visibility,
    )
