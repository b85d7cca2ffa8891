"""zlink_node_program: a Node.js program on the Node binding.

    zlink_node_program(
        name = "node",                 # the sh_binary
        main = "node.js",              # in this package
        data = [...],                  # more files it needs
        env = {"VAR": "path/in/runfiles"},   # exported as $root/<path> unless set
    )

The generated launcher finds the runfiles (its own, a driver's that starts it
from its own directory, or the tree it sits in), points the binding at the
addon (ZLINK_NODE_ADDON) and at the plain libzlink.so.1 (ZLINK_LIBRARY;
Node.js cannot load a sanitized library) unless the caller set them, and
runs node on main.
"""

def zlink_node_program(name, main, data = [], env = {}, testonly = False, visibility = None):
    pkg = native.package_name()
    extra = "\\n".join([
        'export %s="$${%s:-$$root/%s}"' % (k, k, v)
        for k, v in sorted(env.items())
    ])
    native.genrule(
        name = name + "_launcher",
        testonly = testonly,
        srcs = ["//tools/bazel:node_launcher.sh.in"],
        outs = [name + "_launcher.sh"],
        cmd = "sed -e 's|@MAIN@|%s/%s|g' -e 's|@EXTRA_ENV@|%s|' $< > $@" % (pkg, main, extra),
    )
    native.sh_binary(
        name = name,
        testonly = testonly,
        srcs = [name + "_launcher.sh"],
        data = [main] + data + [
            "//bindings/node:addon",
            "//bindings/node:js",
            "//core:libzlink_plain",
        ],
        visibility = visibility,
    )
