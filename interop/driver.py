#!/usr/bin/env python3
"""driver.py — runs the interop suite's scenarios across processes over tcp
(interop/README.md).

usage:
  driver.py --node LANG=PROGRAM [--node ...] cs CLIENT SERVER [N]
      a CLIENT-language client sends N (default 20) interop.echo requests to a
      SERVER-language ClientServer server of one channel; every reply must be
      the request's payload followed by "|<server language>", in order
  driver.py --node LANG=PROGRAM [--node ...] ring LANG[@RID] [LANG[@RID] ...]
      one RouteMesh node per member (routing id RID, the language's name
      when not given), each connected to the next; the first sends
      interop.hop once around the ring and the path must name every node in
      ring order, ending with the first

Every program is started as `PROGRAM <role> ...`, speaks the lines of
interop/c/node.c's design notes, and must end with BYE and exit status 0 once
its stdin closes. Each read has a deadline (a failure bound); a program that
misses it is killed and the scenario fails naming it. The last line is
"PASS <scenario>" or "FAIL <scenario>: <why>"; the exit status 0 or 1.
"""
import argparse
import os
import selectors
import subprocess
import sys
import time

DEADLINE_S = 60 * int(os.environ.get("ZT_TIMEOUT_MULT", "1"))


class Proc:
    def __init__(self, name, argv):
        self.name = name
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=None, text=True, bufsize=1)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.p.stdout, selectors.EVENT_READ)

    def line(self, prefix):
        """The next stdout line; it must start with prefix."""
        end = time.monotonic() + DEADLINE_S
        while True:
            left = end - time.monotonic()
            if left <= 0 or not self.sel.select(left):
                raise Failure("%s: no %s line within %d s" % (self.name, prefix, DEADLINE_S))
            text = self.p.stdout.readline()
            if text == "":
                raise Failure("%s: exited (%s) before its %s line"
                              % (self.name, self.p.wait(), prefix))
            text = text.rstrip("\n")
            if text.startswith("ERROR"):
                raise Failure("%s: %s" % (self.name, text))
            if not text.startswith(prefix + " ") and text != prefix:
                raise Failure("%s: expected %s, got %r" % (self.name, prefix, text))
            return text[len(prefix):].strip()

    def send(self, text):
        self.p.stdin.write(text + "\n")
        self.p.stdin.flush()

    def finish(self):
        """Closes stdin; the program must print BYE and exit 0."""
        self.p.stdin.close()
        self.line("BYE")
        try:
            rc = self.p.wait(timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            raise Failure("%s: did not exit after BYE" % self.name)
        if rc != 0:
            raise Failure("%s: exit status %d" % (self.name, rc))

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


class Failure(Exception):
    pass


def cs(nodes, client, server, count, procs):
    srv = Proc(server + " server", [nodes[server], "serve-cs", "interop"])
    procs.append(srv)
    endpoint = srv.line("READY")
    cli = Proc(client + " client", [nodes[client], "call-cs", "interop", endpoint, str(count)])
    procs.append(cli)
    for i in range(count):
        got = cli.line("REPLY")
        want = "%s#%d|%s" % (client, i, server)
        if got != want:
            raise Failure("reply %d is %r, not %r" % (i, got, want))
    cli.p.stdin.close()
    cli.line("BYE")
    if cli.p.wait(timeout=DEADLINE_S) != 0:
        raise Failure("%s: exit status %d" % (cli.name, cli.p.returncode))
    srv.finish()


def ring(nodes, members, procs):
    """members: LANG or LANG@RID (the routing id; LANG when not given)."""
    # Peers are connected before a host starts and a link carries requests
    # both ways, so node j connects to node j - 1 and the last node also to
    # node 0: every link of the ring, each made by the later node.
    ring_nodes, rids = [], []
    k = len(members)
    for j, member in enumerate(members):
        lang, _, rid = member.partition("@")
        rid = rid or lang
        peers = []
        if j > 0:
            peers += [ring_nodes[j - 1][2], rids[j - 1]]
        if j == k - 1 and k > 2:
            peers += [ring_nodes[0][2], rids[0]]
        p = Proc(rid + " node", [nodes[lang], "ring", "interop", rid] + peers)
        procs.append(p)
        ring_nodes.append((rid, p, p.line("READY")))
        rids.append(rid)
    for i, (_, p, _) in enumerate(ring_nodes):
        p.send("NEXT %s" % rids[(i + 1) % k])
    # Each node has its successor and, from its predecessor's connect, that
    # one too (one peer when the ring has two nodes).
    want_peers = 1 if k == 2 else 2
    for _, p, _ in ring_nodes:
        p.send("WAIT %d" % want_peers)
    for _, p, _ in ring_nodes:
        p.line("PEERS")
    # Once around, back to the first node, which answers: every node's
    # handler forwards while its turn stays open, and node-direct handlers
    # share one gate per node, so a second lap would queue behind the first
    # lap's open turn until the timeout (by design: turns of a gate never
    # overlap).
    first = ring_nodes[0][1]
    first.send("START %d" % (k - 1))
    got = first.line("RING")
    want = ">".join(rids + [rids[0]])
    if got != want:
        raise Failure("the ring's path is %r, not %r" % (got, want))
    for _, p, _ in ring_nodes:
        p.finish()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--node", action="append", default=[], metavar="LANG=PROGRAM")
    ap.add_argument("scenario", choices=["cs", "ring"])
    ap.add_argument("langs", nargs="+")
    args = ap.parse_args()
    nodes = dict(n.split("=", 1) for n in args.node)
    name = "%s %s" % (args.scenario, " ".join(args.langs))
    procs = []
    try:
        for lang in args.langs:
            lang = lang.partition("@")[0]
            if not lang.isdigit() and lang not in nodes:
                raise Failure("no program for language %r (give --node %s=PROGRAM)"
                              % (lang, lang))
        if args.scenario == "cs":
            if len(args.langs) not in (2, 3):
                raise Failure("cs takes CLIENT SERVER [N]")
            count = int(args.langs[2]) if len(args.langs) == 3 else 20
            cs(nodes, args.langs[0], args.langs[1], count, procs)
        else:
            if len(args.langs) < 2:
                raise Failure("a ring needs two languages or more")
            ring(nodes, args.langs, procs)
    except Failure as e:
        print("FAIL %s: %s" % (name, e))
        return 1
    finally:
        for p in procs:
            p.kill()
    print("PASS %s" % name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
