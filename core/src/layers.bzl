# core/src/layers.bzl — one Bazel package per layer of the Core.
#
# The layers, bottom up (doc/core-architecture.md):
#   util  wire  msg  engine  sock  protocols  poll  api
# A layer may depend on the layers below it only. `zl_layer` makes each a
# cc_library whose public headers (hdrs) are reached as "<layer>/<file>.h"
# and whose private headers sit in srcs, so nothing outside the package can
# include them. Visibility lists exactly the layers allowed to use it; the
# //core package (the aggregate library, tests, benchmarks' link) sees all.
# //core:layering_test checks every #include against the same table
# (core/src/LAYERS), so a back-edge fails the build or the test.

CORE_COPTS = [
    "-fvisibility=hidden",
    "-DZLINK_BUILDING",
    "-pthread",
    "-Wall",
    "-Wextra",
]

# Layer -> the layers allowed to depend on it (besides //core).
_USERS = {
    "util": ["msg", "wire", "engine", "sock", "protocols", "poll", "api"],
    "wire": ["msg", "engine", "sock", "protocols", "api"],
    "msg": ["engine", "sock", "protocols", "poll", "api"],
    "engine": ["sock", "api"],
    "sock": ["protocols", "poll", "api"],
    "protocols": ["api"],
    "poll": ["api"],
    "api": [],
}

def zl_layer(name, srcs, hdrs, deps = [], linkopts = []):
    native.cc_library(
        name = name,
        srcs = srcs,
        hdrs = hdrs,
        copts = CORE_COPTS,
        strip_include_prefix = "/core/src",
        linkopts = linkopts,
        linkstatic = True,
        # The shared library exports functions nothing inside it calls.
        alwayslink = True,
        deps = deps + ["//abi:headers"],
        visibility = ["//core/src/%s:__pkg__" % u for u in _USERS[name]] + ["//core:__pkg__"],
    )
    # The layer's files as data for //core:layering_test.
    native.filegroup(
        name = "files",
        srcs = srcs + hdrs + ["BUILD"],
        visibility = ["//core:__pkg__"],
    )
