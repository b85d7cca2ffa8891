# binding.gyp — builds the addon (build/Release/zlink.node) with node-gyp:
#   node-gyp rebuild --nodedir=/usr      (or `npm install`, which runs it)
# The addon is not linked against libzlink: it opens libzlink.so.1 at run
# time (src/loader.cc). It needs zlink.h: ZLINK_INCLUDE_DIR, else
# `pkg-config --cflags-only-I zlink`, else the copy in include/ (the npm
# package) or ../../abi/include (the source tree); scripts/include_dir.js.
{
  "targets": [
    {
      "target_name": "zlink",
      "sources": ["src/loader.cc", "src/framework.cc", "src/core.cc"],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "<!(node scripts/include_dir.js)"
      ],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc": ["-std=c++17", "-fexceptions", "-Wall", "-Wextra"],
      "libraries": ["-ldl"]
    }
  ]
}
