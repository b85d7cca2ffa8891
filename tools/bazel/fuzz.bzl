"""clang_fuzz_binary: a libFuzzer executable compiled by clang-14 directly.

Bazel 4.2.3 here configures gcc as its C toolchain, and gcc has no libFuzzer.
Instead of a second toolchain (and a config every caller must remember), this
rule runs clang-14 itself on the listed sources, always with the same flags:
-fsanitize=fuzzer,address,undefined, recovery off. The flags of --config
(asan, tsan, opt) do not reach it, so the fuzzer is the same ASan + UBSan
binary in every configuration and `bazel test //...` builds and runs it with
the default one. doc/testing.md, "Fuzzing".

The sources are compiled whole in one action (the fuzzed decoders and the
few Core files they need are small). `srcs` are the target's own files;
`core_srcs` names Core files by their workspace paths among the files of
//core:core_sources (every layer's and the framework's sources, visible to
//fuzz; the layer packages themselves show their files to //core only).
Every header there is an input, so a change to any Core header rebuilds
the fuzzers. `includes` are execroot-relative -I directories.

fuzz_target is what fuzz/BUILD calls: one harness, its smoke test and its
`bazel run` entry point, with the harness files and include directories
every target shares.
"""

FUZZ_FLAGS = [
    "-std=c11",
    "-D_GNU_SOURCE",
    "-DZLINK_BUILDING",
    "-g",
    "-O1",
    "-fno-omit-frame-pointer",
    "-fsanitize=fuzzer,address,undefined",
    "-fno-sanitize-recover=all",
    "-pthread",
    "-Wall",
    "-Wextra",
]

def _clang_fuzz_binary_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name)
    core = {f.short_path: f for f in ctx.files._core_files}
    srcs = [f for f in ctx.files.srcs if f.extension == "c"]
    for p in ctx.attr.core_srcs:
        if p not in core:
            fail("%s is not among the files of //core:core_sources" % p)
        if p.endswith(".c"):
            srcs.append(core[p])
    args = ctx.actions.args()
    args.add(out)
    args.add_all(FUZZ_FLAGS)
    args.add_all(ctx.attr.copts)
    args.add_all(ctx.attr.includes, format_each = "-I%s")
    args.add_all(srcs)
    args.add_all(ctx.attr.linkopts)
    ctx.actions.run_shell(
        outputs = [out],
        inputs = ctx.files.srcs + [core[p] for p in ctx.attr.core_srcs] +
                 [f for p, f in core.items() if p.endswith(".h")],
        arguments = [args],
        command = """
set -e
out="$1"; shift
if ! command -v clang-14 >/dev/null 2>&1; then
  echo "clang-14 not found: run tools/setup.sh (clang-14, libclang-rt-14-dev)" >&2
  exit 1
fi
exec clang-14 -o "$out" "$@"
""",
        mnemonic = "ClangFuzz",
        progress_message = "Compiling fuzz target %s with clang-14" % ctx.label,
        use_default_shell_env = False,
        env = {"PATH": "/bin:/usr/bin:/usr/local/bin"},
    )
    return [DefaultInfo(executable = out, files = depset([out]))]

clang_fuzz_binary = rule(
    implementation = _clang_fuzz_binary_impl,
    executable = True,
    attrs = {
        "srcs": attr.label_list(allow_files = [".c", ".h"]),
        "core_srcs": attr.string_list(),
        "_core_files": attr.label(default = "//core:core_sources"),
        "includes": attr.string_list(),
        "copts": attr.string_list(),
        "linkopts": attr.string_list(),
    },
    doc = "A libFuzzer binary built by clang-14 with ASan + UBSan (see the file's docstring).",
)

# What every harness of fuzz/ is compiled with: its own file, the helpers
# they share, the public headers, and the include directories the Core's
# sources expect.
_HARNESS_SRCS = ["fuzz_common.h", "//abi:public_headers"]
_HARNESS_INCLUDES = ["abi/include", "core/src"]

def fuzz_target(name, core_srcs, includes = [], smoke_seconds = 4, **kwargs):
    """One libFuzzer target and its two entry points.

    <name>_bin    the clang_fuzz_binary of fuzz_<name>.c (with fuzz_common.h
                  and the public headers) and core_srcs, with abi/include,
                  core/src and `includes` as include directories;
    <name>        `bazel run //fuzz:<name> -- <libFuzzer flags> [dirs]`
                  (fuzz/run.sh: the seed corpus and the default limits);
    <name>_smoke  the bounded run `bazel test //...` does: the seed corpus
                  replayed, then smoke_seconds of fuzzing (fuzz/smoke.sh).
    The seeds are the files of corpus/<name>/ in the calling package. Other
    keyword arguments (copts, linkopts) go to the clang_fuzz_binary.
    """
    corpus = native.package_name() + "/corpus/" + name
    bin = ":%s_bin" % name
    data = [bin, ":%s_corpus" % name]
    native.filegroup(
        name = name + "_corpus",
        srcs = native.glob(["corpus/%s/*" % name]),
    )
    clang_fuzz_binary(
        name = name + "_bin",
        srcs = ["fuzz_%s.c" % name] + _HARNESS_SRCS,
        core_srcs = core_srcs,
        includes = _HARNESS_INCLUDES + includes,
        testonly = True,
        **kwargs
    )
    native.sh_binary(
        name = name,
        srcs = ["run.sh"],
        args = ["$(rootpath %s)" % bin, corpus],
        data = data,
        testonly = True,
    )
    native.sh_test(
        name = name + "_smoke",
        size = "small",
        srcs = ["smoke.sh"],
        args = ["$(rootpath %s)" % bin, corpus, str(smoke_seconds)],
        data = data,
    )
