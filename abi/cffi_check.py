#!/usr/bin/env python3
"""cffi_check.py — the ZLink ABI as a sixth language sees it (//abi:cffi_check).

usage: cffi_check.py --decls zlink.h.i --macros zlink.h.macros
                     --layout layout.json --map zlink.map --lib libzlink.so.1

Design notes
 - A foreign loader knows only the header and the shared object. This check
   is one: CFFI in ABI mode (no compiler at check time) takes the public
   declarations from the preprocessed header by the fixed rule of
   public_decls.py (no hand-written copy), opens the library with dlopen,
   and computes struct layouts itself with the platform's C rules.
 - It checks, and names what disagrees in every failure:
     1. the exports: every ZLINK_EXPORT function is in one node of
        zlink.map and every name of the map is declared; the library's
        major version is the header's; each function resolves through
        glibc's dlvsym with its node, and the default version dlsym finds
        is that same definition; CFFI's own loader finds each one;
     2. the layouts: the public structs CFFI parsed and those of
        layout.json (printed by a C program, //abi:layout_json) are the
        same set, with the same fields in the same order, each with the
        same offset and size, and the same sizeof and alignof; the same for
        the scalar, enum and pointer typedefs and the opaque handles;
     3. the Core: a DEALER's zlink_request to a ROUTER over inproc,
        answered with zlink_reply, comes back as one REQUEST completion
        record (zlink_completion_t, its struct_size from layout.json) with
        the reply bytes, the completion id and the user context;
     4. the framework: a ClientServer host whose handler is a CFFI callback
        (it runs on a framework worker, a runtime context) answering with
        zlink_turn_respond, and a client request finished with
        zlink_call_wait: the reply's bytes, packet and result; the handler
        ran exactly once; and in a thread marked with
        zlink_runtime_context_enter, zlink_call_wait fails at once with
        INVALID_OPERATION and sends nothing.
 - Every wait has a bound (socket timeouts, the call's timeout); none is a
   sleep for a condition.
 - CFFI releases the GIL around each foreign call, so the framework's
   worker can enter the Python handler while the main thread waits in
   zlink_call_wait.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import public_decls  # noqa: E402

import cffi  # noqa: E402

# glibc's dlopen flags (dlfcn.h, Linux): the values are part of glibc's ABI.
RTLD_NOW = 2
RTLD_LOCAL = 0


class Failures:
    def __init__(self):
        self.items = []

    def add(self, area, text):
        self.items.append("%s: %s" % (area, text))
        print("FAIL %s: %s" % (area, text), flush=True)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def parse_map(text):
    """zlink.map -> (nodes in order, {name: node})."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"#[^\n]*", " ", text)
    nodes, where = [], {}
    for m in re.finditer(r"([A-Za-z_][\w.]*)\s*\{(.*?)\}\s*([\w.]*)\s*;", text, flags=re.S):
        node, body = m.group(1), m.group(2)
        nodes.append(node)
        glob = re.split(r"\blocal\s*:", body)[0]
        glob = re.sub(r"\bglobal\s*:", " ", glob)
        for name in re.findall(r"([A-Za-z_]\w*)\s*;", glob):
            if name in where:
                raise SystemExit("zlink.map: %s is in %s and %s" % (name, where[name], node))
            where[name] = node
    if not nodes:
        raise SystemExit("zlink.map: no version node found")
    return nodes, where


def open_libdl():
    """dlopen/dlsym/dlvsym through CFFI, from libc (glibc >= 2.34) or libdl."""
    ffi = cffi.FFI()
    ffi.cdef("""
        void *dlopen(const char *file, int mode);
        void *dlsym(void *handle, const char *name);
        void *dlvsym(void *handle, const char *name, const char *version);
        char *dlerror(void);
        int dlclose(void *handle);
    """)
    last = None
    for name in ("libc.so.6", "libdl.so.2"):
        try:
            lib = ffi.dlopen(name)
            lib.dlvsym  # noqa: B018 (resolves now)
            return ffi, lib
        except (OSError, AttributeError) as e:
            last = e
    raise SystemExit("cffi_check: cannot find dlvsym in libc.so.6 or libdl.so.2: %s" % last)


def check_exports(fail, ffi, exports, nodes, where, libpath, macros):
    area = "exports"
    declared = set(exports)
    for name in exports:
        if name not in where:
            fail.add(area, "%s is declared ZLINK_EXPORT but is in no node of zlink.map" % name)
    for name in sorted(set(where) - declared):
        fail.add(area, "%s is in zlink.map (%s) but no public header declares it ZLINK_EXPORT"
                 % (name, where[name]))

    dffi, dl = open_libdl()
    handle = dl.dlopen(libpath.encode(), RTLD_NOW | RTLD_LOCAL)
    if handle == dffi.NULL:
        raise SystemExit("cffi_check: dlopen(%s): %s" % (libpath, dffi.string(dl.dlerror()).decode()))
    try:
        for name in exports:
            node = where.get(name)
            if node is None:
                continue
            exact = dl.dlvsym(handle, name.encode(), node.encode())
            if exact == dffi.NULL:
                found = [n for n in nodes
                         if dl.dlvsym(handle, name.encode(), n.encode()) != dffi.NULL]
                if found:
                    fail.add(area, "%s: zlink.map binds it to %s, the library has it at %s"
                             % (name, node, ", ".join(found)))
                elif dl.dlsym(handle, name.encode()) != dffi.NULL:
                    fail.add(area, "%s: exported without the version node %s (unversioned "
                             "or another node)" % (name, node))
                else:
                    fail.add(area, "%s: not exported by %s (zlink.map says %s)"
                             % (name, os.path.basename(libpath), node))
                continue
            default = dl.dlsym(handle, name.encode())
            if default != exact:
                fail.add(area, "%s: the default version is not %s (dlsym and dlvsym disagree)"
                         % (name, node))
    finally:
        dl.dlclose(handle)

    lib = ffi.dlopen(libpath)
    for name in exports:
        try:
            getattr(lib, name)
        except (AttributeError, NotImplementedError) as e:
            fail.add(area, "CFFI cannot resolve %s: %s" % (name, e))
    major, minor, patch = ffi.new("int *"), ffi.new("int *"), ffi.new("int *")
    lib.zlink_version(major, minor, patch)
    want = macros.get("ZLINK_VERSION_MAJOR")
    if want is None:
        fail.add(area, "ZLINK_VERSION_MAJOR is not an integer macro of the header")
    elif major[0] != want:
        fail.add(area, "zlink_version() reports major %d, the header says %d" % (major[0], want))
    print("exports: %d functions checked against %d version nodes (%s)"
          % (len(exports), len(nodes), ", ".join(nodes)), flush=True)
    return lib


def _is_anonymous(ctype):
    return ctype.kind in ("struct", "union") and "$" in ctype.cname


def cffi_fields(ffi, ctype, prefix="", base=0):
    """[(path, offset, size)] as CFFI lays ctype out; members of anonymous
    struct/union types are listed after their member, as layout.json does."""
    out = []
    for name, field in ctype.fields:
        if field.bitsize != -1:
            raise SystemExit("cffi_check: bit-field %s%s is not handled" % (prefix, name))
        if name == "" or name is None:
            out.extend(cffi_fields(ffi, field.type, prefix, base + field.offset))
            continue
        out.append((prefix + name, base + field.offset, ffi.sizeof(field.type)))
        if _is_anonymous(field.type):
            out.extend(cffi_fields(ffi, field.type, prefix + name + ".", base + field.offset))
    return out


def check_layout(fail, ffi, layout):
    area = "layout"
    typedef_names, struct_tags, _union_tags = ffi.list_types()
    cffi_structs, cffi_scalars, cffi_opaque = [], [], []
    typedef_tags = set()
    for name in typedef_names:
        try:
            t = ffi.typeof(name)
        except cffi.CDefError:
            continue  # a function type (zlink_free_fn): no size, not in layout.json
        if t.kind == "struct":
            typedef_tags.add(id(t))
            if t.fields is None:
                cffi_opaque.append(name)
            else:
                cffi_structs.append(name)
        elif t.kind == "union":
            cffi_structs.append(name)
        else:  # primitive, enum, pointer; "function" is a function pointer
            cffi_scalars.append(name)
    for tag in struct_tags:
        cname = "struct " + tag
        t = ffi.typeof(cname)
        if id(t) not in typedef_tags and t.fields is not None:
            cffi_structs.append(cname)

    want = layout["structs"]
    for name in sorted(set(cffi_structs) - set(want)):
        fail.add(area, "%s is a public struct of the header but not in layout.json" % name)
    for name in sorted(set(want) - set(cffi_structs)):
        fail.add(area, "layout.json has %s, which CFFI did not find in the header" % name)
    for name in [n for n in want if n in cffi_structs]:
        w = want[name]
        t = ffi.typeof(name)
        if ffi.sizeof(t) != w["size"]:
            fail.add(area, "sizeof(%s): CFFI %d, C %d" % (name, ffi.sizeof(t), w["size"]))
        if ffi.alignof(t) != w["align"]:
            fail.add(area, "alignof(%s): CFFI %d, C %d" % (name, ffi.alignof(t), w["align"]))
        got = cffi_fields(ffi, t)
        got_names = [p for p, _, _ in got]
        want_names = [f["name"] for f in w["fields"]]
        if got_names != want_names:
            missing = [n for n in got_names if n not in want_names]
            extra = [n for n in want_names if n not in got_names]
            fail.add(area, "%s: fields differ: CFFI %s, C %s%s%s" % (
                name, got_names, want_names,
                "; not in layout.json: %s" % missing if missing else "",
                "; not seen by CFFI: %s" % extra if extra else ""))
        wf = {f["name"]: f for f in w["fields"]}
        for path, off, size in got:
            f = wf.get(path)
            if f is None:
                continue
            if off != f["offset"]:
                fail.add(area, "offsetof(%s, %s): CFFI %d, C %d" % (name, path, off, f["offset"]))
            if size != f["size"]:
                fail.add(area, "sizeof(%s.%s): CFFI %d, C %d" % (name, path, size, f["size"]))
        has_field = "struct_size" in got_names
        if has_field != (w["struct_size"] is not None):
            fail.add(area, "%s: struct_size convention: field %s, layout.json says %r"
                     % (name, "present" if has_field else "absent", w["struct_size"]))
        elif has_field and w["struct_size"] != w["size"]:
            fail.add(area, "%s: layout.json's struct_size %d is not its size %d"
                     % (name, w["struct_size"], w["size"]))

    wt = layout["typedefs"]
    for name in sorted(set(cffi_scalars) - set(wt)):
        fail.add(area, "typedef %s is in the header but not in layout.json" % name)
    for name in sorted(set(wt) - set(cffi_scalars)):
        fail.add(area, "layout.json has typedef %s, which CFFI did not find" % name)
    for name in [n for n in wt if n in cffi_scalars]:
        if ffi.sizeof(name) != wt[name]["size"]:
            fail.add(area, "sizeof(%s): CFFI %d, C %d" % (name, ffi.sizeof(name), wt[name]["size"]))
        if ffi.alignof(name) != wt[name]["align"]:
            fail.add(area, "alignof(%s): CFFI %d, C %d"
                     % (name, ffi.alignof(name), wt[name]["align"]))
    if sorted(cffi_opaque) != sorted(layout["opaque"]):
        fail.add(area, "opaque handles: CFFI %s, layout.json %s"
                 % (sorted(cffi_opaque), sorted(layout["opaque"])))
    if ffi.sizeof("void *") != layout["pointer_size"]:
        fail.add(area, "pointer size: CFFI %d, C %d" % (ffi.sizeof("void *"), layout["pointer_size"]))
    print("layout: %d structs, %d typedefs, %d opaque handles compared"
          % (len(want), len(wt), len(layout["opaque"])), flush=True)


class CheckError(Exception):
    pass


def expect(cond, text):
    if not cond:
        raise CheckError(text)


def msg_bytes(ffi, lib, msg):
    return bytes(ffi.buffer(lib.zlink_msg_data(msg), lib.zlink_msg_size(msg)))


def msg_set(ffi, lib, msg, data):
    expect(lib.zlink_msg_init_size(msg, len(data)) == lib.ZLINK_CONFIG_OK, "zlink_msg_init_size")
    ffi.memmove(lib.zlink_msg_data(msg), data, len(data))


def set_int(ffi, lib, sock, option, value, name):
    v = ffi.new("int *", value)
    rc = lib.zlink_setsockopt(sock, option, v, ffi.sizeof("int"))
    expect(rc == lib.ZLINK_CONFIG_OK, "zlink_setsockopt(%s): %s" % (name, result_name(ffi, lib, rc)))


def result_name(ffi, lib, rc):
    p = lib.zlink_result_name(rc)
    return "%d (%s)" % (rc, ffi.string(p).decode() if p != ffi.NULL else "?")


def core_round_trip(ffi, lib, macros, layout):
    """3. DEALER -> ROUTER request over inproc, answered by zlink_reply."""
    timeo = 10000  # ms; a failure bound only
    ctx = lib.zlink_ctx_new()
    expect(ctx != ffi.NULL, "zlink_ctx_new returned NULL")
    socks = []
    try:
        router = lib.zlink_socket(ctx, macros["ZLINK_ROUTER"])
        dealer = lib.zlink_socket(ctx, macros["ZLINK_DEALER"])
        expect(router != ffi.NULL and dealer != ffi.NULL, "zlink_socket returned NULL")
        socks = [dealer, router]
        for s in socks:
            set_int(ffi, lib, s, macros["ZLINK_LINGER"], 0, "LINGER")
            set_int(ffi, lib, s, macros["ZLINK_SNDTIMEO"], timeo, "SNDTIMEO")
            set_int(ffi, lib, s, macros["ZLINK_RCVTIMEO"], timeo, "RCVTIMEO")
        ep = b"inproc://abi-cffi-check"
        rc = lib.zlink_bind(router, ep)
        expect(rc == lib.ZLINK_BIND_OK, "zlink_bind: %s" % result_name(ffi, lib, rc))
        rc = lib.zlink_connect(dealer, ep)
        expect(rc == lib.ZLINK_CONNECT_OK, "zlink_connect: %s" % result_name(ffi, lib, rc))

        parts = ffi.new("zlink_msg_t[1]")
        msg_set(ffi, lib, parts, b"ping from cffi")
        user = ffi.new("int *", 42)
        cid = ffi.new("zlink_completion_id_t *")
        rc = lib.zlink_request(dealer, ffi.NULL, parts, 1, 0, timeo, user, cid)
        expect(rc == lib.ZLINK_SUBMIT_OK, "zlink_request: %s" % result_name(ffi, lib, rc))
        expect(cid[0] != 0, "zlink_request gave completion id 0")

        rid = ffi.new("const zlink_routing_id_t **")
        token = ffi.new("zlink_reply_token_t *")
        got = ffi.new("zlink_msg_t[4]")
        count = ffi.new("size_t *")
        rc = lib.zlink_router_recv(router, rid, token, got, 4, count, 0)
        expect(rc == lib.ZLINK_RECV_OK, "zlink_router_recv: %s" % result_name(ffi, lib, rc))
        expect(token[0] != 0, "the ROUTER received DATA (token 0), not the REQUEST")
        expect(count[0] == 1, "the request has %d parts, want 1" % count[0])
        body = msg_bytes(ffi, lib, got)
        lib.zlink_multipart_close(got, count[0])
        expect(body == b"ping from cffi", "the ROUTER received %r" % body)

        reply = ffi.new("zlink_msg_t[1]")
        msg_set(ffi, lib, reply, b"pong from cffi")
        rc = lib.zlink_reply(router, rid[0], token[0], reply, 1)
        expect(rc == lib.ZLINK_SUBMIT_OK, "zlink_reply: %s" % result_name(ffi, lib, rc))

        rec = ffi.new("zlink_completion_t *")
        rec.struct_size = layout["structs"]["zlink_completion_t"]["struct_size"]
        rc = lib.zlink_completion_recv(dealer, rec, 0)
        expect(rc == lib.ZLINK_RECV_OK, "zlink_completion_recv: %s" % result_name(ffi, lib, rc))
        try:
            expect(rec.kind == lib.ZLINK_COMPLETION_REQUEST,
                   "completion kind %d, want REQUEST" % rec.kind)
            expect(rec.completion_id == cid[0],
                   "completion id %d, the request's was %d" % (rec.completion_id, cid[0]))
            expect(rec.user_context == user, "the completion's user_context is not the request's")
            expect(rec.request_result == lib.ZLINK_REQUEST_OK,
                   "request_result %s" % result_name(ffi, lib, rec.request_result))
            expect(rec.reply_part_count == 1, "%d reply parts, want 1" % rec.reply_part_count)
            answer = msg_bytes(ffi, lib, rec.reply_parts)
            expect(answer == b"pong from cffi", "the DEALER got the reply %r" % answer)
        finally:
            lib.zlink_completion_close(rec)
    finally:
        # Close even after a failure; report a close failure only when
        # nothing failed before it (the first failure is the one to read).
        cleanup = []
        for sock in socks:
            rc = lib.zlink_close(sock)
            if rc != lib.ZLINK_CLOSE_OK:
                cleanup.append("zlink_close: %s" % result_name(ffi, lib, rc))
        rc = lib.zlink_ctx_term(ctx)
        if rc != lib.ZLINK_CLOSE_OK:
            cleanup.append("zlink_ctx_term: %s" % result_name(ffi, lib, rc))
        if cleanup and sys.exc_info()[0] is None:
            raise CheckError("; ".join(cleanup))
    print("core: DEALER request / ROUTER reply over inproc: ok", flush=True)


def ms(n):
    return n * 1000000


def framework_round_trip(ffi, lib, layout):
    """4. A ClientServer request answered by a CFFI handler."""
    calls = []

    def handler(turn, _user):
        # A framework worker thread: a runtime context.
        try:
            size = ffi.new("size_t *")
            data = lib.zlink_turn_payload(turn, size)
            body = bytes(ffi.buffer(data, size[0])) if data != ffi.NULL else b""
            calls.append((ffi.string(lib.zlink_turn_packet(turn)).decode(),
                          body, lib.zlink_in_runtime_context()))
            reply = b"reply:" + body
            rc = lib.zlink_turn_respond(turn, b"echo.reply", b"", reply, len(reply))
            if rc != lib.ZLINK_FW_OK:
                calls.append(("respond failed", result_name(ffi, lib, rc), None))
                if rc in (lib.ZLINK_FW_INVALID_ARGUMENT, lib.ZLINK_FW_INVALID_OPERATION):
                    lib.zlink_turn_end(turn, 1, b"zlink_turn_respond failed")  # still open
        except Exception as e:  # never leave a turn open: shutdown would wait for it
            calls.append(("handler raised", repr(e), None))
            lib.zlink_turn_end(turn, 1, repr(e).encode()[:200])

    handler_fn = ffi.callback("zlink_handler_fn", handler)
    rc_p = ffi.new("zlink_fw_result_t *")
    hosts = []

    def fw(rc, what):
        expect(rc == lib.ZLINK_FW_OK, "%s: %s" % (what, result_name(ffi, lib, rc)))

    try:
        server = lib.zlink_host_new(b"cffi-server", rc_p)
        expect(server != ffi.NULL, "zlink_host_new(server): %s" % result_name(ffi, lib, rc_p[0]))
        hosts.append(server)
        fw(lib.zlink_host_add_cs_server(server, b"svc", b"tcp://127.0.0.1:0"),
           "zlink_host_add_cs_server")
        fw(lib.zlink_host_add_handler(server, lib.ZLINK_OWNER_CHANNEL, b"svc",
                                      lib.ZLINK_MESSAGE_REQUEST, b"echo", handler_fn, ffi.NULL),
           "zlink_host_add_handler")
        fw(lib.zlink_host_start(server), "zlink_host_start(server)")
        ep = ffi.new("char[256]")
        fw(lib.zlink_host_endpoint(server, b"svc", ep, 256), "zlink_host_endpoint")

        client = lib.zlink_host_new(b"cffi-client", rc_p)
        expect(client != ffi.NULL, "zlink_host_new(client): %s" % result_name(ffi, lib, rc_p[0]))
        hosts.append(client)
        fw(lib.zlink_host_add_cs_client(client, b"svc", ffi.string(ep)), "zlink_host_add_cs_client")
        fw(lib.zlink_host_start(client), "zlink_host_start(client)")

        outcome_size = layout["structs"]["zlink_outcome_t"]["struct_size"]

        # In a runtime context the synchronous terminator refuses at once.
        call = lib.zlink_call_request_to_channel(client, b"svc", rc_p)
        expect(call != ffi.NULL, "zlink_call_request_to_channel: %s"
               % result_name(ffi, lib, rc_p[0]))
        try:
            fw(lib.zlink_call_set_payload(call, b"echo", b"", b"never sent", 10),
               "zlink_call_set_payload")
            fw(lib.zlink_runtime_context_enter(), "zlink_runtime_context_enter")
            try:
                expect(lib.zlink_in_runtime_context() == 1, "zlink_in_runtime_context() != 1")
                outcome = ffi.new("zlink_outcome_t *")
                outcome.struct_size = outcome_size
                rc = lib.zlink_call_wait(call, outcome)
                expect(rc == lib.ZLINK_FW_INVALID_OPERATION,
                       "zlink_call_wait in a runtime context: %s, want INVALID_OPERATION"
                       % result_name(ffi, lib, rc))
            finally:
                fw(lib.zlink_runtime_context_leave(), "zlink_runtime_context_leave")
        finally:
            lib.zlink_call_release(call)

        call = lib.zlink_call_request_to_channel(client, b"svc", rc_p)
        expect(call != ffi.NULL, "zlink_call_request_to_channel: %s"
               % result_name(ffi, lib, rc_p[0]))
        try:
            fw(lib.zlink_call_set_payload(call, b"echo", b"", b"hello", 5), "zlink_call_set_payload")
            fw(lib.zlink_call_set_timeout(call, ms(10000)), "zlink_call_set_timeout")
            outcome = ffi.new("zlink_outcome_t *")
            outcome.struct_size = outcome_size
            rc = lib.zlink_call_wait(call, outcome)
            expect(rc == lib.ZLINK_FW_OK, "zlink_call_wait: %s (outcome %s: %s)" % (
                result_name(ffi, lib, rc), outcome.result,
                ffi.string(outcome.message).decode() if outcome.message != ffi.NULL else ""))
            expect(outcome.result == lib.ZLINK_FW_OK, "outcome.result %s: %s" % (
                result_name(ffi, lib, outcome.result), ffi.string(outcome.message).decode()))
            expect(outcome.struct_size == outcome_size,
                   "zlink_call_wait changed struct_size to %d" % outcome.struct_size)
            payload = bytes(ffi.buffer(outcome.payload, outcome.payload_size))
            expect(payload == b"reply:hello", "the reply payload is %r" % payload)
            packet = ffi.string(outcome.packet).decode()
            expect(packet == "echo.reply", "the reply packet is %r" % packet)
        finally:
            lib.zlink_call_release(call)
    finally:
        cleanup = []
        for h in reversed(hosts):
            if lib.zlink_host_state(h) == lib.ZLINK_HOST_SERVING:
                rc = lib.zlink_host_shutdown(h, ms(5000))
                if rc != lib.ZLINK_FW_OK:
                    cleanup.append("zlink_host_shutdown: %s" % result_name(ffi, lib, rc))
            rc = lib.zlink_host_destroy(h)
            if rc != lib.ZLINK_FW_OK:
                cleanup.append("zlink_host_destroy: %s" % result_name(ffi, lib, rc))
        if cleanup and sys.exc_info()[0] is None:
            raise CheckError("; ".join(cleanup))
    expect(calls == [("echo", b"hello", 1)],
           "the handler saw %r, want one call [('echo', b'hello', in runtime context 1)]" % calls)
    print("framework: ClientServer request, CFFI handler, zlink_turn_respond, "
          "zlink_call_wait: ok", flush=True)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--decls", required=True)
    ap.add_argument("--macros", required=True)
    ap.add_argument("--layout", required=True)
    ap.add_argument("--map", required=True)
    ap.add_argument("--lib", required=True)
    args = ap.parse_args(argv[1:])

    try:
        cdef_text, exports, headers = public_decls.parse(read(args.decls))
    except public_decls.DeclError as e:
        print("cffi_check: FAIL: %s" % e)
        return 1
    macros = public_decls.integer_macros(read(args.macros))
    layout = json.loads(read(args.layout))
    nodes, where = parse_map(read(args.map))

    ffi = cffi.FFI()
    try:
        ffi.cdef(cdef_text)
    except cffi.CDefError as e:
        print("cffi_check: FAIL: CFFI's cdef refuses the public declarations: %s" % e)
        return 1
    print("decls: %s: %d exported functions" % (", ".join(headers), len(exports)), flush=True)

    fail = Failures()
    lib = check_exports(fail, ffi, exports, nodes, where, os.path.abspath(args.lib), macros)
    check_layout(fail, ffi, layout)
    if fail.items:
        # The round trips marshal those structs: not worth running on a
        # layout or a symbol set that disagrees.
        print("cffi_check: FAIL: %d disagreement(s); the round trips were not run"
              % len(fail.items))
        return 1
    for step in (core_round_trip, framework_round_trip):
        try:
            if step is core_round_trip:
                step(ffi, lib, macros, layout)
            else:
                step(ffi, lib, layout)
        except CheckError as e:
            fail.add(step.__name__, str(e))
        except KeyError as e:
            fail.add(step.__name__, "no integer macro or layout entry %s" % e)
    if fail.items:
        print("cffi_check: FAIL: %d disagreement(s)" % len(fail.items))
        return 1
    print("cffi_check: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
