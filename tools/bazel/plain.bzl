"""plain_files: the same targets built without sanitizer flags.

A JVM, the .NET runtime or Node.js cannot load a library built with
-fsanitize=address or thread unless the sanitizer's runtime is the first
library of the process, which those runtimes do not support (ThreadSanitizer
needs the executable itself instrumented). The bindings' tests therefore load
libzlink.so.1 built by this rule: --config=asan and --config=tsan still apply
to every C and C++ target, and the foreign runtimes get the library built
with the plain flags of .bazelrc (-O2 -g, no sanitizer). doc/decisions.md
("Foreign runtimes load a plain libzlink").
"""

_SANITIZER_PREFIXES = ("-fsanitize", "-fno-sanitize", "-fno-omit-frame-pointer")

def _drop_sanitizers(flags):
    return [f for f in flags if not f.startswith(_SANITIZER_PREFIXES)]

def _plain_transition_impl(settings, attr):
    return {
        "//command_line_option:copt": _drop_sanitizers(settings["//command_line_option:copt"]),
        "//command_line_option:linkopt": _drop_sanitizers(settings["//command_line_option:linkopt"]),
        "//command_line_option:platform_suffix": "plain",
    }

_plain_transition = transition(
    implementation = _plain_transition_impl,
    inputs = [
        "//command_line_option:copt",
        "//command_line_option:linkopt",
    ],
    outputs = [
        "//command_line_option:copt",
        "//command_line_option:linkopt",
        "//command_line_option:platform_suffix",
    ],
)

def _plain_files_impl(ctx):
    files = depset(transitive = [d[DefaultInfo].files for d in ctx.attr.srcs])
    return [DefaultInfo(files = files, runfiles = ctx.runfiles(transitive_files = files))]

plain_files = rule(
    implementation = _plain_files_impl,
    attrs = {
        "srcs": attr.label_list(cfg = _plain_transition, allow_files = True),
        "_allowlist_function_transition": attr.label(
            default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
        ),
    },
    doc = "The files of srcs, built without -fsanitize flags (see the file's docstring).",
)
