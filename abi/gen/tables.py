#!/usr/bin/env python3
"""tables.py — generates each language binding's result, error-kind and
export tables from the C ABI's own sources.

usage:
  tables.py --lang LANG RESULTS_JSON ZLINK_MAP > FILE     print the table
  tables.py --lang LANG --check FILE RESULTS_JSON ZLINK_MAP
                                                           exit 1 when FILE
                                                           differs

Design notes
 - The inputs are results.json (//abi:results_json, printed by a C program
   from the header's X-macros) and the version script zlink.map (the
   exported names and their version nodes). Nothing here knows a result
   value, an error kind or a function name: a binding that carries a table
   the header no longer has fails its drift test (--check), which each
   binding's BUILD runs as a test (tables.bzl).
 - The model handed to each language's emitter (emit_<lang>.py, a function
   emit(model) returning the file's text) is:
     version    "1.2.0"; major, minor, patch as ints
     families   results.json's families, as they are
     errnos     results.json's errnos
     kinds      the 13 framework error kinds: name ("NotFound"), constant
                ("ZLINK_ERROR_NOT_FOUND"), value (0..12), result (800..812)
     framework  the framework family's values by short name: {"OK": 0,
                "NOT_FOUND": 800, ..., "CANCELLED": 813, ...}
     exports    every exported function: [{"name": ..., "node": "ZLINK_1.0"}]
                in version-script order
     nodes      the version nodes in order
 - Standard library only; the generated text is deterministic (no date, no
   path), so the committed copy and a fresh one compare byte for byte.
"""
import argparse
import importlib
import json
import os
import re
import sys


def read_map(path):
    nodes, exports, node = [], [], None
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    for line in text.splitlines():
        line = line.strip()
        m = re.match(r"^(ZLINK_[0-9.]+)\s*\{", line)
        if m:
            node = m.group(1)
            nodes.append(node)
            continue
        if line.startswith("}"):
            node = None
            continue
        m = re.match(r"^(zlink_[A-Za-z0-9_]+)\s*;$", line)
        if m and node:
            exports.append({"name": m.group(1), "node": node})
    if not exports:
        raise SystemExit("tables.py: no exports found in %s" % path)
    return nodes, exports


def pascal(constant):
    return "".join(w.capitalize() for w in constant.split("_"))


def model(results_path, map_path):
    with open(results_path, encoding="utf-8") as f:
        results = json.load(f)
    major, minor, patch = (int(x) for x in results["version"].split("."))
    fw = next(f for f in results["families"] if f["family"] == "framework")
    framework = {v["name"][len("ZLINK_FW_"):]: v["value"] for v in fw["values"]}
    base = framework["NOT_FOUND"]
    kinds = []
    for short, value in framework.items():
        if base <= value <= base + 12:
            kinds.append({"name": pascal(short), "constant": "ZLINK_ERROR_" + short,
                          "value": value - base, "result": value})
    kinds.sort(key=lambda k: k["value"])
    if [k["value"] for k in kinds] != list(range(13)):
        raise SystemExit("tables.py: the framework family does not hold the 13 error kinds")
    nodes, exports = read_map(map_path)
    return {
        "version": results["version"], "major": major, "minor": minor, "patch": patch,
        "families": results["families"], "errnos": results["errnos"],
        "kinds": kinds, "framework": framework, "exports": exports, "nodes": nodes,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lang", required=True)
    ap.add_argument("--check", metavar="FILE")
    ap.add_argument("results")
    ap.add_argument("map")
    args = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        emitter = importlib.import_module("emit_" + args.lang)
    except ImportError:
        raise SystemExit("tables.py: no emitter for language %r" % args.lang)
    text = emitter.emit(model(args.results, args.map))
    if args.check is None:
        sys.stdout.write(text)
        return 0
    with open(args.check, encoding="utf-8") as f:
        committed = f.read()
    if committed != text:
        sys.stderr.write("tables.py: %s differs from the table the header gives; "
                         "regenerate it (tools/gen_tables.sh)\n" % args.check)
        import difflib
        sys.stderr.writelines(difflib.unified_diff(
            committed.splitlines(True), text.splitlines(True), args.check, "generated"))
        return 1
    print("tables.py: %s matches the header (%s)" % (args.check, args.lang))
    return 0


if __name__ == "__main__":
    sys.exit(main())
