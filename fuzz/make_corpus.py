#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (fuzz/corpus/<target>/).

Every seed is an example of doc/protocol.md (the section is named next to
it), or one built from the layout that section gives, wrapped in the
target's input format (fuzz/README.md): the control bytes the harness reads
first (limit / selector, split points, part lengths), then the bytes the
decoder sees. Run from anywhere; it replaces the corpus directories whole:

    python3 fuzz/make_corpus.py
"""
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def h(text):
    """Hex bytes as the protocol document writes them ("5A 01 ...")."""
    return bytes.fromhex(text.replace("\n", " "))


def u16(v):
    return struct.pack(">H", v)


def u32(v):
    return struct.pack(">I", v)


def u64(v):
    return struct.pack(">Q", v)


def l8(b):
    return bytes([len(b)]) + b


def l16(b):
    return u16(len(b)) + b


def split_input(cfg, stream, cuts):
    """zmp_frames / stream_packet: [cfg][count][u16 cuts][stream]."""
    return bytes([cfg, len(cuts)]) + b"".join(u16(c) for c in cuts) + stream


# ---------------------------------------------------------------- ZMP (§12)

HELLO_PAIR = h("5A 01 02 00 00 00 00 04 01 10 01 00")
READY_EMPTY = h("5A 01 02 00 00 00 00 01 04")
REC_HI = h("5A 01 01 00 00 00 00 02 68 69")
REC_THERE = h("5A 01 00 00 00 00 00 05 74 68 65 72 65")
HELLO_DEALER = h("5A 01 02 00 00 00 00 06 01 10 04 02 64 31")
READY_DEALER_BODY = (
    h("04")
    + l8(b"Socket-Type") + u32(6) + b"DEALER"
    + l8(b"Routing-Id") + u32(2) + b"d1"
    + l8(b"Zlink-Lane-Count") + u32(1) + h("01")
    + l8(b"Zlink-Lane") + u32(1) + h("00")
    + l8(b"Zlink-Weight") + u32(4) + u32(100)
)
READY_DEALER = h("5A 01 02 00") + u32(len(READY_DEALER_BODY)) + READY_DEALER_BODY
REQUEST_Q = h("5A 01 00 01 00 00 00 01 00 00 00 00 00 00 00 07 71")
WEIGHT_300 = h("5A 01 02 00 00 00 00 0A 57 45 49 47 48 54 00 00 01 2C")
# §8.3: "FLOWSTATE", version 1, state (1 paused), u64 epoch.
FLOWSTATE_BODY = b"FLOWSTATE" + h("01 01") + u64(42)
FLOWSTATE = h("5A 01 02 00") + u32(len(FLOWSTATE_BODY)) + FLOWSTATE_BODY
# §7.1 ERROR: command 05, code, L8 reason.
ERROR_BODY = h("05 03") + l8(b"incompatible socket types")
ERROR = h("5A 01 02 00") + u32(len(ERROR_BODY)) + ERROR_BODY

PAIR_STREAM = HELLO_PAIR + READY_EMPTY + REC_HI + REC_THERE
DEALER_STREAM = HELLO_DEALER + READY_DEALER + REQUEST_Q + WEIGHT_300 + FLOWSTATE

ZMP_FRAMES = {
    # cfg 0: no limit; 5: 4096; 3: 8 bytes (the "hi" record passes, "there" not)
    "pair_whole": split_input(0, PAIR_STREAM, []),
    "pair_split_every_frame": split_input(0, PAIR_STREAM, [12, 21, 31]),
    "pair_split_in_headers": split_input(5, PAIR_STREAM, [3, 14, 25, 40]),
    "pair_small_limit": split_input(3, PAIR_STREAM, [1, 2]),
    "dealer_whole": split_input(0, DEALER_STREAM, []),
    "dealer_split": split_input(5, DEALER_STREAM, [7, 15, 60, 107, 120, 140]),
    "request_seq7": split_input(0, REQUEST_Q, [9]),
    "weight_300": split_input(0, WEIGHT_300, [4]),
    "error": split_input(0, ERROR, [10]),
    # a truncated record: EOF inside a frame of a record
    "truncated": split_input(0, REC_HI + REC_THERE[:6], [5]),
}

# selector byte: low nibble the own type, high nibble the HELLO type
# (TYPES in fuzz_zmp_controls.c: 1 PAIR, 2 DEALER, 3 ROUTER).
ZMP_CONTROLS = {
    "hello_pair": bytes([0x11]) + HELLO_PAIR[8:],
    "hello_dealer": bytes([0x23]) + HELLO_DEALER[8:],
    "ready_empty": bytes([0x11]) + READY_EMPTY[8:],
    "ready_dealer": bytes([0x23]) + READY_DEALER_BODY,
    "ready_max_msg": bytes([0x11]) + h("04") + l8(b"Zlink-Max-Message-Size") + u32(8) + u64(65536),
    "weight_300": bytes([0x00]) + WEIGHT_300[8:],
    "flowstate": bytes([0x00]) + FLOWSTATE_BODY,
    "error": bytes([0x29]) + ERROR_BODY,
    "errno_part": bytes([0x00]) + u32(110),
}

# ------------------------------------------------------- STREAM PACKET (§11)

PKT_HD_BODY = h("00 02 00 00 00 04 68 64 62 6F 64 79")
PKT_EMPTY = h("00 00 00 00 00 00")
PKT_STREAM = PKT_HD_BODY + PKT_EMPTY + u16(1) + u32(3) + b"Hxyz"

STREAM_PACKET = {
    "hd_body_whole": split_input(0, PKT_HD_BODY, []),
    "hd_body_split_prefix": split_input(0, PKT_HD_BODY, [1, 3, 7]),
    "three_packets": split_input(5, PKT_STREAM, [2, 12, 13, 20]),
    "over_limit": split_input(4, PKT_STREAM, [8]),
    "eof_in_body": split_input(0, PKT_STREAM[:-2], [9]),
    "big_claim": split_input(0, u16(0) + u32(0x7FFFFFFF) + b"abc", [3]),
}

# ------------------------------------------------ service wire v1 (§14.9)


def parts_input(parts):
    """fw_wire: [n][u16 len per part but the last][parts]."""
    out = bytes([len(parts)])
    for p in parts[:-1]:
        out += u16(len(p))
    return out + b"".join(parts)


def prefix(cmd, flags=0):
    return b"ZM" + bytes([1, cmd, flags])


def envelope(packet, ctype, payload):
    return h("01") + u32(len(payload)) + l8(packet) + l8(ctype) + payload


NODE_REQUEST = [
    h("5A 4D 01 11 01 01 02 03 04 05 06 07 08 11 12 13 14 15 16 17 18"
      " 21 22 23 24 25 26 27 28 31 32 33 34"),
    h("01 01 6B 00 01 76"),
    h("01 00 00 00 02 01 50 01 74 78 79"),
]
CHANNELS = l8(b"orders") + u16(100) + l8(b"audit") + u16(0)
HELLO_BODY = l8(b"mesh") + l8(b"node-1") + l8(b"framework-service-v11") + u64(7) + u16(2) + CHANNELS

FW_WIRE = {
    "node_request_golden": parts_input(NODE_REQUEST),
    "hello": parts_input([prefix(1) + HELLO_BODY]),
    "admit": parts_input([prefix(2) + HELLO_BODY]),
    "reject": parts_input([prefix(3) + u32(106) + l16(b"no room")]),
    "update": parts_input([prefix(4) + u64(7) + u64(1) + h("01") + u16(2) + CHANNELS]),
    "probe": parts_input([prefix(5) + u64(0x1122334455667788)]),
    "ack": parts_input([prefix(6) + u64(0x1122334455667788)]),
    "node_send": parts_input([prefix(16) + u64(0) + u64(0), envelope(b"P", b"", b"")]),
    "channel_send": parts_input([prefix(18) + u64(1) + u64(2) + l8(b"orders"),
                                 envelope(b"Order", b"json", b"{}")]),
    "channel_request_meta": parts_input([
        prefix(19, 1) + u64(9) + u64(1) + u64(2) + u32(500) + l8(b"orders"),
        h("02") + l8(b"trace") + l16(b"abc") + l8(b"k") + l16(b""),
        envelope(b"Order", b"t", b"payload"),
    ]),
    "reply_ok": parts_input([prefix(20) + u64(9) + u64(1) + u64(2) + u32(0) + u32(0) + l16(b""),
                             envelope(b"R", b"", b"ok")]),
    "reply_not_found": parts_input([prefix(20) + u64(9) + u64(1) + u64(2) + u32(102) + u32(5)
                                    + l16(b"no such channel")]),
}

CORPORA = {
    "zmp_frames": ZMP_FRAMES,
    "zmp_controls": ZMP_CONTROLS,
    "stream_packet": STREAM_PACKET,
    "fw_wire": FW_WIRE,
}


def main():
    for target, seeds in CORPORA.items():
        d = os.path.join(HERE, "corpus", target)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for name, data in seeds.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        print("%s: %d seeds" % (target, len(seeds)))


if __name__ == "__main__":
    main()
