"""public_decls.py — the declarations of the public headers, as a foreign
loader reads them, from the C preprocessor's output.

Shared by layout_gen.py (build time: the layout program's tables) and
cffi_check.py (test time: CFFI's cdef), so both see the same text.

The input is the output of `$(CC) -E -std=c11 -I abi/include zlink.h` WITH
its line markers (`# 1 "abi/include/zlink.h"`). The rule that turns it into
text CFFI's cdef (and pycparser) accept is fixed and has three steps; there
is no hand-written copy of any declaration:

 1. Keep only the lines that came from a file under the public include
    directory (zlink.h, zlink/framework.h), as the line markers say. What
    the system headers declare (stdint.h, stddef.h, errno.h) is dropped:
    the types the public headers use from them (uint32_t, size_t, ...) are
    built into CFFI. Every macro is already expanded (the X-macro tables
    became enumerators), and every #define is gone.
 2. Remove EXPORT_ATTRIBUTE, the expansion of ZLINK_EXPORT with GCC, and
    remember the declaration it introduced: those are the exported
    functions. The name of each is the identifier right before the first
    "(" of its declaration.
 3. Fail, naming the line, if any other GCC extension (__attribute__,
    __extension__, __asm__, __inline, __restrict) is left: the rule must be
    extended by a person, never by silently dropping text.

Standard library only.
"""
import os
import re

EXPORT_ATTRIBUTE = '__attribute__((visibility("default")))'
_UNSUPPORTED = re.compile(r"\b(__attribute__|__extension__|__asm__|asm|__inline\w*|__restrict\w*)\b")
_MARKER = re.compile(r'^#\s*(?:line\s+)?\d+\s+"([^"]*)"')


class DeclError(Exception):
    """The preprocessed header does not follow the rule above."""


def public_text(cpp_output, include_dir=None):
    """Step 1: the text of the files under include_dir (a path prefix as it
    appears in the line markers; by default the directory of the file the
    preprocessor was given, zlink.h's), line markers removed."""
    if include_dir is None:
        for line in cpp_output.splitlines():
            m = _MARKER.match(line)
            if m:
                include_dir = os.path.dirname(m.group(1)) or "."
                break
        else:
            raise DeclError("no line marker in the preprocessed input (was cpp run with -P?)")
    prefix = include_dir.rstrip("/") + "/"
    keep = False
    seen = set()
    lines = []
    for line in cpp_output.splitlines():
        m = _MARKER.match(line)
        if m:
            path = m.group(1)
            keep = path.startswith(prefix)
            if keep:
                seen.add(path[len(prefix):])
            continue
        if line.startswith("#"):
            # #pragma and friends: CFFI cannot take them. One that changes a
            # layout (pack) makes C and CFFI disagree, which cffi_check's
            # layout comparison reports.
            continue
        if keep and line.strip():
            lines.append(line)
    if "zlink.h" not in seen:
        raise DeclError("no line of %szlink.h in the preprocessed input "
                        "(wrong include dir, or cpp ran without line markers?)" % prefix)
    return "\n".join(lines) + "\n", sorted(seen)


def _top_level_declarations(text):
    """Splits text at the semicolons outside braces and parentheses."""
    decls = []
    depth = 0
    start = 0
    for i, c in enumerate(text):
        if c in "({":
            depth += 1
        elif c in ")}":
            depth -= 1
        elif c == ";" and depth == 0:
            decls.append(text[start:i + 1])
            start = i + 1
    rest = text[start:].strip()
    if rest:
        raise DeclError("text after the last declaration: %r" % rest[:80])
    return decls


def parse(cpp_output, include_dir=None):
    """Steps 1-3. Returns (cdef_text, exports, headers): the declarations
    CFFI's cdef takes, the exported function names in header order, and
    the public headers seen (relative to include_dir)."""
    text, headers = public_text(cpp_output, include_dir)
    out = []
    exports = []
    for decl in _top_level_declarations(text):
        if EXPORT_ATTRIBUTE in decl:
            decl = decl.replace(EXPORT_ATTRIBUTE, "", 1)
            if EXPORT_ATTRIBUTE in decl:
                raise DeclError("two export attributes in one declaration: %r"
                                % " ".join(decl.split())[:120])
            m = re.search(r"(\w+)\s*\(", decl)
            if not m:
                raise DeclError("an exported declaration that is not a function: %r"
                                % " ".join(decl.split())[:120])
            exports.append(m.group(1))
        bad = _UNSUPPORTED.search(decl)
        if bad:
            raise DeclError("%s in a public declaration; public_decls.py's rule must be "
                            "extended to handle it: %r"
                            % (bad.group(1), " ".join(decl.split())[:160]))
        out.append(decl.strip())
    if not exports:
        raise DeclError("no ZLINK_EXPORT declaration found (was %r the expansion?)"
                        % EXPORT_ATTRIBUTE)
    dup = sorted({n for n in exports if exports.count(n) > 1})
    if dup:
        raise DeclError("declared more than once: %s" % ", ".join(dup))
    return "\n".join(out) + "\n", exports, headers


_DEFINE = re.compile(r"^#define\s+(ZLINK_\w+)\s+(.+?)\s*$")


def integer_macros(dm_output):
    """The ZLINK_* object-like macros of `cpp -dM` output whose value is one
    integer literal (ZLINK_ROUTER 0x1005, ZLINK_VERSION_MAJOR 1, ...), as a
    dict. Function-like macros and expressions are left out: CFFI's ABI
    mode cannot see macros, so a check that needs a value reads it here."""
    values = {}
    for line in dm_output.splitlines():
        m = _DEFINE.match(line)
        if not m:
            continue
        literal = m.group(2).rstrip("uUlL")
        try:
            values[m.group(1)] = int(literal, 0)
        except ValueError:
            continue
    return values
