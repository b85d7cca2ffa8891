"""The conformance suite's test targets, one set per language.

conformance/BUILD names each language's runner once, in a dict, and hands
the dict to conformance_suite():

    RUNNERS = {
        "c": ":c_runner",
        "cpp": "//conformance/cpp:runner",
    }
    conformance_suite(RUNNERS)

For each language LANG -> RUNNER that makes (conformance_language):

    :<LANG>        test_suite of :cases_<LANG>, the sh_test in which every
                   case of cases.json passes (run.sh --run):
                   the runner runs the whole manifest, exits 0, and its CASE
                   lines hold against the manifest (the C runner's --verify:
                   pass, or absent-by-seed only where the manifest marks the
                   case absent for LANG; one line per case, in order)
    :check_<LANG>  sh_test: "RUNNER --check cases.json" exits 0 and reports
                   nothing missing: the manifest is well formed and the
                   runner implements exactly its cases, so a language that
                   lacks a case fails the build

and once, for all of them (conformance_matrix):

    :matrix        sh_binary: the case x language matrix of every runner in
                   the dict (bazel run //conformance:matrix [-- --json])

Adding a language is one line in RUNNERS. A runner is any executable
target (cc_binary, sh_binary ...) that speaks doc/conformance.md's
protocol; the tests start it from their runfiles with the manifest's path,
the working directory at the runfiles root and RUNFILES_DIR set.
"""

# Every language of the suite, in the matrix's column order (matrix.sh and
# c/manifest.c know the same list).
LANGUAGES = ["c", "cpp", "java", "dotnet", "node"]

_MANIFEST = "//conformance:cases.json"
_VERIFIER = "//conformance:c_runner"
_RUN_SH = "//conformance:run.sh"

def _absolute(label):
    """":x" -> "//<this package>:x", so the same target is listed once."""
    if label.startswith(":"):
        return "//%s%s" % (native.package_name(), label)
    return label

def conformance_language(lang, runner, size = "medium", tags = [], **kwargs):
    """The test targets :<lang> and :check_<lang> of one language.

    Args:
      lang: one of LANGUAGES.
      runner: the label of the language's runner (an executable target).
      size: the size of :<lang> (its timeout; doc/testing.md). :check_<lang>
        runs no case and is small.
      tags: extra tags for both tests. :<lang> is always "exclusive": the
        cases measure time (deadlines, p99 latencies), so a language's
        suite does not share the machine with another suite.
      **kwargs: passed to both sh_tests (e.g. env).
    """
    if lang not in LANGUAGES:
        fail("conformance_language: unknown language %r (one of %s)" % (lang, LANGUAGES))
    runner = _absolute(runner)
    data = [_MANIFEST, _VERIFIER] + ([runner] if runner != _VERIFIER else [])
    args = [
        lang,
        "$(location %s)" % _VERIFIER,
        "$(location %s)" % _MANIFEST,
        "$(location %s)" % runner,
    ]
    # The test itself is cases_<lang>: an sh_test's output file is named
    # after it, and bazel-bin/conformance/<lang> is already the output
    # directory of the //conformance/<lang> package (the runner's). :<lang>
    # is a test_suite naming it, which has no output of its own.
    native.sh_test(
        name = "cases_" + lang,
        size = size,
        srcs = [_RUN_SH],
        args = ["--run"] + args,
        data = data,
        tags = tags + ["exclusive"],
        **kwargs
    )
    native.test_suite(
        name = lang,
        tests = [":cases_" + lang],
        tags = tags,
    )
    native.sh_test(
        name = "check_" + lang,
        size = "small",
        srcs = [_RUN_SH],
        args = ["--check"] + args,
        data = data,
        tags = tags,
        **kwargs
    )

def conformance_matrix(name, runners):
    """The matrix over the runners of a {lang: runner label} dict."""
    if "c" not in runners:
        fail("conformance_matrix: the C runner is the matrix's reference; runners needs \"c\"")
    args = ["--manifest", "$(location %s)" % _MANIFEST]
    data = [_MANIFEST]
    for lang in LANGUAGES:
        if lang in runners:
            runner = _absolute(runners[lang])
            args += ["--runner", "%s=$(location %s)" % (lang, runner)]
            if runner not in data:
                data.append(runner)
    for lang in runners:
        if lang not in LANGUAGES:
            fail("conformance_matrix: unknown language %r (one of %s)" % (lang, LANGUAGES))
    native.sh_binary(
        name = name,
        testonly = True,
        srcs = ["matrix.sh"],
        args = args,
        data = data,
    )

def conformance_suite(runners, sizes = {}, incomplete = []):
    """conformance_language for each entry of runners, and :matrix.

    Args:
      runners: {lang: runner label}; "c" is required (the reference).
      sizes: {lang: test size} for a language whose whole run needs more
        than "medium" allows (doc/testing.md's timeouts).
      incomplete: languages whose runner does not implement every case yet.
        Their :<lang> and :check_<lang> are tagged "manual" (bazel test
        //... leaves them out; naming them runs them, and they fail while a
        case is missing); the matrix still shows every cell. The list is
        the plain statement of what is not done, and must shrink to [].
    """
    for lang in incomplete:
        if lang not in runners:
            fail("conformance_suite: incomplete language %r has no runner" % lang)
        if lang == "c":
            fail("conformance_suite: the C runner is the reference and cannot be incomplete")
    for lang in LANGUAGES:
        if lang in runners:
            conformance_language(
                lang,
                runners[lang],
                size = sizes.get(lang, "medium"),
                tags = ["manual"] if lang in incomplete else [],
            )
    conformance_matrix(name = "matrix", runners = runners)
