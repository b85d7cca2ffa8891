"""Reads the library version from abi/include/zlink.h, the single source.

Bazel cannot read a source file while it loads BUILD files, so a repository
rule (run locally, no network) parses the three ZLINK_VERSION_* macros out of
the header and writes them to @zlink_version//:version.bzl. Bazel records the
header as an input of the rule: editing the version in zlink.h regenerates
the values on the next build. core/BUILD names the shared library
libzlink.so.<MAJOR> from them, and //abi:abi_check cross-checks the result.
"""

_NAMES = ["ZLINK_VERSION_MAJOR", "ZLINK_VERSION_MINOR", "ZLINK_VERSION_PATCH"]

def _zlink_version_impl(rctx):
    header = rctx.path(rctx.attr.header)
    found = {}
    for line in rctx.read(header).splitlines():
        words = [w for w in line.replace("\t", " ").split(" ") if w]
        if len(words) == 3 and words[0] == "#define" and words[1] in _NAMES:
            if not words[2].isdigit():
                fail("%s: %s is not a plain number: %s" % (header, words[1], words[2]))
            found[words[1]] = int(words[2])
    missing = [n for n in _NAMES if n not in found]
    if missing:
        fail("%s: no #define for %s" % (header, ", ".join(missing)))

    lines = ["# Generated from %s by abi/version.bzl. Do not edit." % rctx.attr.header]
    for n in _NAMES:
        lines.append("%s = %d" % (n, found[n]))
    lines.append('ZLINK_VERSION_STRING = "%d.%d.%d"' % tuple([found[n] for n in _NAMES]))
    rctx.file("version.bzl", "\n".join(lines) + "\n")
    rctx.file("BUILD", 'exports_files(["version.bzl"])\n')

zlink_version_repository = repository_rule(
    implementation = _zlink_version_impl,
    attrs = {
        "header": attr.label(allow_single_file = True, mandatory = True),
    },
    doc = "Exposes the ZLINK_VERSION_* macros of zlink.h to BUILD files.",
)
