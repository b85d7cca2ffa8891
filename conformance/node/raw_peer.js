// raw_peer.js — test-only peers of the JQ cases that a framework host would
// never be (conformance/c/jq_raw.c's design notes): framework records
// encoded by hand from doc/protocol.md §14 and sent by a plain Core socket
// of a context of the case's own (so over tcp only), and a raw ZMP peer
// over a plain TCP connection (core/tests/zltest_rawzmp.h in JavaScript),
// which reads the FLOWSTATE frames a ZLink socket sends.
'use strict';
const net = require('net');
const { ok, fail, ms } = require('./check');
const { zlink } = require('./harness');

// --------------------------------------------------------------- the wire

// A frame built big-endian, byte by byte.
class Wire {
  constructor() {
    this.b = [];
  }
  u8(v) {
    this.b.push(Number(v) & 0xff);
    return this;
  }
  u16(v) {
    return this.u8(v >> 8).u8(v);
  }
  u32(v) {
    const x = Number(v);
    return this.u8(Math.floor(x / 0x1000000)).u8(x >> 16).u8(x >> 8).u8(x);
  }
  u64(v) {
    const x = BigInt(v);
    return this.u32(Number(x >> 32n)).u32(Number(x & 0xffffffffn));
  }
  bytes(p) {
    for (const c of p) this.b.push(c);
    return this;
  }
  // An L8 string: its byte length (at most 255) and its UTF-8 bytes.
  l8(s) {
    const p = Buffer.from(s, 'utf8');
    ok(p.length <= 255, 'an l8 string of at most 255 bytes');
    return this.u8(p.length).bytes(p);
  }
  // Frame 0's prefix (§14.1): magic "ZM", major 1, the command, the flags.
  prefix(command, flags) {
    return this.u8(0x5a).u8(0x4d).u8(0x01).u8(command).u8(flags);
  }
  done() {
    return Buffer.from(this.b);
  }
}

// A call record's frames (§14.3, §14.6): CHANNEL_SEND (18), or
// CHANNEL_REQUEST (19) with its correlation and timeout_ms 0 when
// correlation != 0; then the payload envelope (packet "m", content "").
function record(flags, correlation, op, channel, payload) {
  const request = BigInt(correlation) !== 0n;
  const f0 = new Wire().prefix(request ? 19 : 18, flags);
  if (request) f0.u64(correlation);
  f0.u64(0).u64(op); // op_high, op_low
  if (request) f0.u32(0);
  f0.l8(channel);
  const p = Buffer.isBuffer(payload) ? payload : Buffer.from(payload, 'utf8');
  const f1 = new Wire().u8(0x01).u32(p.length).l8('m').u8(0).bytes(p);
  return [f0.done(), f1.done()];
}

// A payload of size bytes (at least 5): seq (u32 BE), src (1 byte), zeros.
function seqPayload(seq, src, size) {
  const p = Buffer.alloc(Math.max(size, 5));
  p.writeUInt32BE(seq >>> 0, 0);
  p[4] = src;
  return p;
}

// A raw DEALER of ctx with routing id rid connected to ep; hwm > 0 sets
// both HWMs (records) and a 4 KiB kernel send buffer.
function rawDealer(ctx, rid, ep, hwm = 0) {
  const d = ctx.socket('DEALER');
  d.setRoutingId(rid);
  if (hwm > 0) {
    d.setOption('SNDHWM', BigInt(hwm));
    d.setOption('RCVHWM', BigInt(hwm));
    d.setOption('SNDBUF', 4096);
  }
  d.setOption('LINGER', 0);
  d.connect(ep);
  return d;
}

// The next completion record of sock, waited for on a pool thread (the
// JavaScript thread stays free for the hosts' handlers); null when none
// came within boundMs (scaled).
async function nextCompletion(sock, boundMs) {
  const until = Date.now() + ms(boundMs);
  for (;;) {
    try {
      return sock.completionRecv({ dontwait: true });
    } catch (e) {
      if (e.result !== 'ZLINK_RECV_NO_DATA') throw e;
    }
    const left = until - Date.now();
    if (left <= 0) return null;
    const poller = new zlink.Poller();
    try {
      poller.add(sock, zlink.Poll.COMPLETION);
      await poller.waitAsync(1, Math.min(left, 50));
      poller.remove(sock);
    } finally {
      poller.close();
    }
  }
}

// The request_result of the REQUEST completion id on sock (other records
// are skipped).
async function requestResult(sock, id, boundMs = 5000) {
  for (;;) {
    const rec = await nextCompletion(sock, boundMs);
    if (rec === null) fail(`no REQUEST completion for ${id} within ${ms(boundMs)} ms`);
    if (rec.kind === zlink.CompletionKind.REQUEST && rec.completionId === id) return rec.requestResult;
  }
}

// The sending result of a Core call: 'OK' or the result's name
// ('ZLINK_SUBMIT_BACKPRESSURED', ...), with the wait token of a refusal.
function submitOf(fn) {
  try {
    return { result: 'OK', id: fn() };
  } catch (e) {
    if (!(e instanceof zlink.ZLinkError)) throw e;
    return { result: e.result, id: e.completionId || 0n };
  }
}

// ------------------------------------------------------- a raw ZMP peer

const F_MORE = 1;
const F_CONTROL = 2;

// A ZMP frame: the 8-byte header (magic 0x5A, version 1, flags, kind 0,
// u32 size), then the body.
function zmpFrame(flags, body) {
  return Buffer.concat([new Wire().u8(0x5a).u8(0x01).u8(flags).u8(0).u32(body.length).done(), body]);
}

// One plain TCP connection to a ZLink tcp endpoint, speaking ZMP itself.
class RawZmp {
  static async connect(ep) {
    const port = Number(ep.slice(ep.lastIndexOf(':') + 1));
    const r = new RawZmp();
    await new Promise((resolve, reject) => {
      r.s = net.connect({ host: '127.0.0.1', port }, resolve);
      r.s.once('error', reject);
    });
    r.s.setNoDelay(true);
    r.buf = Buffer.alloc(0);
    r.wake = null;
    r.ended = false;
    r.s.on('data', (d) => {
      r.buf = Buffer.concat([r.buf, d]);
      r._wake();
    });
    r.s.on('close', () => {
      r.ended = true;
      r._wake();
    });
    r.s.on('error', () => {});
    return r;
  }
  _wake() {
    if (this.wake) {
      const w = this.wake;
      this.wake = null;
      w();
    }
  }
  send(frame) {
    this.s.write(frame);
  }
  hello(type, rid) {
    this.send(zmpFrame(F_CONTROL, new Wire().u8(0x01).u16(type).l8(rid).done()));
  }
  // READY of a DEALER with routing id rid, one lane, weight 100.
  readyDealer(rid) {
    const w = new Wire().u8(0x04);
    const prop = (name, v) => w.l8(name).u32(v.length).bytes(v);
    prop('Socket-Type', Buffer.from('DEALER'));
    prop('Routing-Id', Buffer.from(rid));
    prop('Zlink-Lane-Count', Buffer.from([1]));
    prop('Zlink-Lane', Buffer.from([0]));
    prop('Zlink-Weight', Buffer.from([0, 0, 0, 100]));
    this.send(zmpFrame(F_CONTROL, w.done()));
  }
  // The next frame { flags, kind, body }, or null when none came within
  // boundMs (scaled) or the connection ended.
  async next(boundMs = 5000) {
    const until = Date.now() + ms(boundMs);
    for (;;) {
      if (this.buf.length >= 8) {
        const h = this.buf;
        ok(h[0] === 0x5a && h[1] === 0x01, 'a frame header from the ZLink side');
        const kind = h[3];
        const size = h.readUInt32BE(4);
        const head = 8 + (kind >= 1 && kind <= 3 ? 8 : 0);
        if (this.buf.length >= head + size) {
          const body = Buffer.from(this.buf.subarray(head, head + size));
          this.buf = this.buf.subarray(head + size);
          return { flags: h[2], kind, body };
        }
      }
      const left = until - Date.now();
      if (this.ended || left <= 0) return null;
      await new Promise((resolve) => {
        this.wake = resolve;
        const t = setTimeout(resolve, left);
        t.unref();
      });
      this.wake = null;
    }
  }
  // One record of frames (Buffers): MORE on each but the last, kind 0
  // (DATA). Returns what the stream's write() said: false once the kernel
  // took no more and the rest waits in this process.
  sendRecord(frames) {
    const wire = Buffer.concat(frames.map((f, i) => zmpFrame(i + 1 < frames.length ? F_MORE : 0, f)));
    return this.s.write(wire);
  }
  // True when the stream's queued bytes went to the kernel within boundMs
  // (unscaled: callers use it as an observation window).
  drained(boundMs) {
    if (this.s.writableLength === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.s.off('drain', on);
        resolve(false);
      }, boundMs);
      const on = () => {
        clearTimeout(t);
        resolve(true);
      };
      this.s.once('drain', on);
    });
  }
  // Reads the frames that came within boundMs; the last FLOWSTATE state
  // among them (or last when none did).
  async lastFlowState(boundMs, last = -1) {
    for (;;) {
      const f = await this.next(boundMs);
      if (f === null) return last;
      const st = RawZmp.flowstate(f);
      if (st >= 0) last = st;
    }
  }
  // The state byte of a FLOWSTATE frame, or -1 for another frame.
  static flowstate(f) {
    if (!f || f.flags !== F_CONTROL || f.body.length !== 19 || f.body.subarray(0, 9).toString('latin1') !== 'FLOWSTATE') return -1;
    return f.body[10];
  }
  close() {
    this.s.destroy();
  }
}

module.exports = { Wire, record, seqPayload, rawDealer, nextCompletion, requestResult, submitOf, zmpFrame, RawZmp, F_CONTROL, F_MORE };
