#!/usr/bin/env python3
"""layout_gen.py — writes the C program behind //abi:layout_json from the
public headers themselves.

usage: layout_gen.py PREPROCESSED_ZLINK_H > layout_main.c

Design notes
 - The input is the preprocessor's output of zlink.h with line markers;
   public_decls.py keeps the declarations of the public headers (the same
   text //abi:cffi_check gives CFFI). pycparser (Debian python3-pycparser,
   which python3-cffi depends on) parses it; nothing here names a struct or
   a field, so a struct or field added to the header is in the next
   layout.json without anyone touching this file or the program.
 - What the program prints comes from the C compiler (sizeof, _Alignof,
   offsetof), never from this script: the script only lists the names.
 - Listed: every struct defined in the public headers (typedef'd or not),
   each member in declaration order, and the members of an inline struct
   union or struct member (an anonymous type) as "outer.inner" paths with offsets from the outermost
   struct; every typedef of a scalar, enum or pointer type (size and
   alignment); the struct_size convention: for a struct with a struct_size
   member, the value a caller stores there (its sizeof in this header; the
   library takes that or more, doc/abi.md). Opaque structs (declared, never defined) are listed by name.
 - The program's output is deterministic (header order, no path or date).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import public_decls  # noqa: E402

from pycparser import c_ast, c_generator, c_parser  # noqa: E402

# For parsing only: pycparser must know these names are types. Their sizes
# come from the compiler when the generated program runs.
_PRELUDE_TYPES = (
    "size_t", "ptrdiff_t", "intptr_t", "uintptr_t",
    "int8_t", "int16_t", "int32_t", "int64_t",
    "uint8_t", "uint16_t", "uint32_t", "uint64_t",
)
_PARSE_PRELUDE = "".join("typedef int %s;\n" % name for name in _PRELUDE_TYPES)
_GEN = c_generator.CGenerator()


def _type_text(node):
    """The C spelling of a member's type, without its name."""
    inner = node
    while not isinstance(inner, c_ast.TypeDecl):
        inner = inner.type
    if isinstance(inner.type, (c_ast.Struct, c_ast.Union)) and inner.type.decls is not None:
        kind = "struct" if isinstance(inner.type, c_ast.Struct) else "union"
        return kind if inner.type.name is None else "%s %s" % (kind, inner.type.name)
    return _GEN._generate_type(node, emit_declname=False).strip()


def _members(decls, prefix, out):
    """Appends (path, type) for each member, recursing into inline
    struct/union members."""
    for d in decls:
        t = d.type
        inline = None
        if isinstance(t, (c_ast.Struct, c_ast.Union)) and t.decls is not None:
            inline = t  # an anonymous member (C11): its members are the outer's
        elif isinstance(t, c_ast.TypeDecl) and isinstance(t.type, (c_ast.Struct, c_ast.Union)) \
                and t.type.decls is not None:
            inline = t.type
        if inline is not None and inline.name is not None:
            raise SystemExit("layout_gen.py: member %s%s defines the named type %s inline; "
                             "extend the generator" % (prefix, d.name or "", inline.name))
        if d.name is None:
            if inline is None:
                raise SystemExit("layout_gen.py: an unnamed member that is not a struct or union")
            _members(inline.decls, prefix, out)
            continue
        if d.bitsize is not None:
            raise SystemExit("layout_gen.py: bit-field %s%s: offsetof cannot name it; "
                             "extend the generator" % (prefix, d.name))
        out.append((prefix + d.name, _type_text(t)))
        if inline is not None:
            _members(inline.decls, prefix + d.name + ".", out)


def collect(ast):
    """(structs, typedefs, opaque) in header order. structs: (c_type, tag,
    members); typedefs: names of scalar, enum and pointer typedefs."""
    structs, typedefs, opaque = [], [], []
    for ext in ast.ext[len(_PRELUDE_TYPES):]:
        if isinstance(ext, c_ast.Typedef):
            t = ext.type
            if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.Struct):
                s = t.type
                if s.decls is None:
                    opaque.append(ext.name)
                else:
                    members = []
                    _members(s.decls, "", members)
                    structs.append((ext.name, s.name, members))
            elif isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.Union):
                raise SystemExit("layout_gen.py: a public union typedef (%s); extend the generator"
                                 % ext.name)
            elif isinstance(t, c_ast.FuncDecl):
                continue  # a function type (zlink_free_fn) has no size
            else:
                typedefs.append(ext.name)
        elif isinstance(ext, c_ast.Decl) and isinstance(ext.type, c_ast.Struct) \
                and ext.type.decls is not None:
            members = []
            _members(ext.type.decls, "", members)
            structs.append(("struct " + ext.type.name, ext.type.name, members))
    return structs, typedefs, opaque


def _c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def program(structs, typedefs, opaque, headers):
    w = []
    w.append("/* Generated by abi/layout_gen.py from the public headers; do not edit. */")
    w.append("#include <stddef.h>")
    w.append("#include <stdio.h>")
    w.append('#include "zlink.h"')
    w.append("")
    w.append("typedef struct { const char *path, *type; size_t offset, size; } member_t;")
    w.append("typedef struct { const char *name, *tag; size_t size, align; int has_struct_size;")
    w.append("                 size_t nmembers; const member_t *members; } layout_t;")
    w.append("typedef struct { const char *name; size_t size, align; } scalar_t;")
    w.append("")
    w.append("#define M(T, path, type) { #path, type, offsetof(T, path), sizeof(((T *)0)->path) }")
    for i, (ctype, tag, members) in enumerate(structs):
        w.append("static const member_t members_%d[] = {" % i)
        for path, typ in members:
            w.append("    M(%s, %s, %s)," % (ctype, path, _c_string(typ)))
        w.append("};")
    w.append("static const layout_t structs[] = {")
    for i, (ctype, tag, members) in enumerate(structs):
        has = 1 if any(path == "struct_size" for path, _ in members) else 0
        w.append("    { %s, %s, sizeof(%s), _Alignof(%s), %d, %d, members_%d }," % (
            _c_string(ctype), _c_string(tag or ""), ctype, ctype, has, len(members), i))
    w.append("};")
    w.append("static const scalar_t typedefs[] = {")
    for name in typedefs:
        w.append("    { %s, sizeof(%s), _Alignof(%s) }," % (_c_string(name), name, name))
    w.append("};")
    w.append("static const char *const opaque[] = {")
    w.append("".join("    %s,\n" % _c_string(n) for n in opaque) + "    NULL")
    w.append("};")
    w.append("static const char *const headers[] = {")
    w.append("".join("    %s,\n" % _c_string(h) for h in headers) + "    NULL")
    w.append("};")
    w.append(r'''
int main(void)
{
    printf("{\n  \"version\": \"%d.%d.%d\",\n", ZLINK_VERSION_MAJOR, ZLINK_VERSION_MINOR,
           ZLINK_VERSION_PATCH);
    printf("  \"headers\": [");
    for (size_t i = 0; headers[i]; i++)
        printf("%s\"%s\"", i ? ", " : "", headers[i]);
    printf("],\n  \"pointer_size\": %zu,\n", sizeof(void *));
    printf("  \"structs\": {\n");
    size_t ns = sizeof structs / sizeof structs[0];
    for (size_t i = 0; i < ns; i++) {
        const layout_t *s = &structs[i];
        printf("    \"%s\": {\n      \"tag\": \"%s\",\n      \"size\": %zu,\n"
               "      \"align\": %zu,\n",
               s->name, s->tag, s->size, s->align);
        if (s->has_struct_size)
            printf("      \"struct_size\": %zu,\n", s->size);
        else
            printf("      \"struct_size\": null,\n");
        printf("      \"fields\": [\n");
        for (size_t j = 0; j < s->nmembers; j++) {
            const member_t *m = &s->members[j];
            printf("        {\"name\": \"%s\", \"type\": \"%s\", \"offset\": %zu, \"size\": %zu}%s\n",
                   m->path, m->type, m->offset, m->size, j + 1 < s->nmembers ? "," : "");
        }
        printf("      ]\n    }%s\n", i + 1 < ns ? "," : "");
    }
    printf("  },\n  \"typedefs\": {\n");
    size_t nt = sizeof typedefs / sizeof typedefs[0];
    for (size_t i = 0; i < nt; i++)
        printf("    \"%s\": {\"size\": %zu, \"align\": %zu}%s\n", typedefs[i].name,
               typedefs[i].size, typedefs[i].align, i + 1 < nt ? "," : "");
    printf("  },\n  \"opaque\": [");
    for (size_t i = 0; opaque[i]; i++)
        printf("%s\"%s\"", i ? ", " : "", opaque[i]);
    printf("]\n}\n");
    return 0;
}''')
    return "\n".join(w) + "\n"


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: layout_gen.py PREPROCESSED_ZLINK_H\n")
        return 2
    with open(argv[1], encoding="utf-8") as f:
        cpp_output = f.read()
    try:
        text, _exports, headers = public_decls.parse(cpp_output)
    except public_decls.DeclError as e:
        sys.stderr.write("layout_gen.py: %s\n" % e)
        return 1
    ast = c_parser.CParser().parse(_PARSE_PRELUDE + text, filename="zlink.h (preprocessed)")
    structs, typedefs, opaque = collect(ast)
    if not structs:
        sys.stderr.write("layout_gen.py: no public struct found\n")
        return 1
    sys.stdout.write(program(structs, typedefs, opaque, headers))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
