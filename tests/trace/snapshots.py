#!/usr/bin/env python3
"""snapshots.py - an independent reader of the snapshot file (T.ctf.retain,
version 2; docs/trace-format.md, section 12), written from the format's page
alone, for the tests of the VM's writer (tests/suites/snapshots.sh).

usage: snapshots.py FILE            one line per whole snapshot:
         number=N trigger=T time=US allocs=A flags=F live=L paths=P marked=B,W heap=H reason=R
       and one per decision record, in the file's order:
         decision time=US allocs=A action=old|young|young-probe site=FUNCTION FILE:LINE:C0-C1 sampled=S counted=C
                  bound=B threshold=T
       snapshots.py --paths FILE    also each path, one line each, after its snapshot:
         path ID ROOT | HOP | HOP ...
Whatever the file holds after its last whole snapshot (an unfinished
snapshot, a record cut short) is said on the last line: "tail: ...".
Damage (a bad check, an unknown kind, fields not filling a record, numbers
out of order, an undefined string, an id not below the alloc count or twice
in a snapshot, more paths than live samples) exits 1 with the byte offset."""
import sys
import zlib

TRIGGERS = ["end", "call", "signal", "period", "peak"]
HOPS = ["field", "tuple", "array", "list cell", "list element", "capture", "Hashtbl value", "Hashtbl key",
        "Buffer storage", "other", "elided", "Hashtbl entry", "Hashtbl storage"]


class Damage(Exception):
    pass


class Cursor:
    def __init__(self, data, start, end, base):
        self.d, self.p, self.end, self.base = data, start, end, base

    def varint(self):
        v, shift = 0, 0
        while True:
            if self.p >= self.end:
                raise Damage("truncated number at byte %d" % (self.base + self.p))
            b = self.d[self.p]
            self.p += 1
            v |= (b & 0x7F) << shift
            if not b & 0x80:
                return v
            shift += 7
            if shift > 63:
                raise Damage("number wider than 64 bits at byte %d" % (self.base + self.p))

    def string(self):
        n = self.varint()
        if n > 4096 or self.p + n > self.end:
            raise Damage("bad string at byte %d" % (self.base + self.p))
        s = self.d[self.p:self.p + n]
        if b"\0" in s:
            raise Damage("NUL in a string at byte %d" % (self.base + self.p))
        self.p += n
        return s.decode("utf-8", "replace")


def read(path, want_paths):
    data = open(path, "rb").read()
    if data[:8] != b"MNRETAIN" or len(data) < 9 or data[8] != 2:
        raise Damage("not a version-2 snapshot file")
    c = Cursor(data, 9, len(data), 0)
    pid, start = c.varint(), c.varint()
    out = ["file pid=%d start=%d" % (pid, start)]
    strings = []
    p = c.p
    cur = None          # the snapshot being read
    expected = 0        # the next snapshot number
    tail = "none"
    while p < len(data):
        if len(data) - p < 8:
            tail = "%d bytes of a record header" % (len(data) - p)
            break
        n = int.from_bytes(data[p:p + 4], "little")
        crc = int.from_bytes(data[p + 4:p + 8], "little")
        if n == 0 or n > (1 << 24):
            raise Damage("record length %d at byte %d" % (n, p))
        if p + 8 + n > len(data):
            tail = "a record cut short at byte %d" % p
            break
        body = data[p + 8:p + 8 + n]
        if zlib.crc32(body) != crc:
            raise Damage("check does not match at byte %d" % p)
        r = Cursor(data, p + 9, p + 8 + n, 0)
        kind = body[0]
        if kind == 1:
            for _ in range(r.varint()):
                strings.append(r.string())
        elif kind == 2:
            num = r.varint()
            if cur is not None or num != expected:
                raise Damage("begin %d out of order at byte %d" % (num, p))
            trig, time, allocs = r.varint(), r.varint(), r.varint()
            cur = {"num": num, "trig": trig, "time": time, "allocs": allocs, "paths": [], "ids": set()}
        elif kind == 3:
            num = r.varint()
            if cur is None or num != cur["num"]:
                raise Damage("paths of snapshot %d out of order at byte %d" % (num, p))
            for _ in range(r.varint()):
                cur["paths"].append(read_path(r, strings, cur))
        elif kind == 4:
            num = r.varint()
            if cur is None or num != cur["num"]:
                raise Damage("end %d out of order at byte %d" % (num, p))
            nums = [r.varint() for _ in range(8)]
            reason = r.string()
            flags, live, npaths, mb, mw, heap, pause, pus = nums
            if npaths != len(cur["paths"]) or npaths > live:
                raise Damage("end %d: %d paths said, %d read, %d live" % (num, npaths, len(cur["paths"]), live))
            out.append("number=%d trigger=%s time=%d allocs=%d flags=%d live=%d paths=%d marked=%d,%d heap=%d "
                       "pause=%d paths_us=%d reason=%s" % (num, TRIGGERS[cur["trig"]] if cur["trig"] < 5 else "?",
                                                           cur["time"], cur["allocs"], flags, live, npaths, mb, mw,
                                                           heap, pause, pus, reason))
            if want_paths:
                for pa in sorted(cur["paths"]):
                    out.append(pa[1])
            cur = None
            expected += 1
        elif kind == 5:
            if cur is not None:
                raise Damage("decision inside snapshot %d at byte %d" % (cur["num"], p))
            time, allocs, action = r.varint(), r.varint(), r.varint()
            fn, fl = name(r, strings), name(r, strings)
            line, c0, c1, sampled, counted, bound, thr = [r.varint() for _ in range(7)]
            if action > 2:
                raise Damage("decision action %d at byte %d" % (action, p))
            out.append("decision time=%d allocs=%d action=%s site=%s %s:%d:%d-%d sampled=%d counted=%d "
                       "bound=%d threshold=%d" % (time, allocs, ["young", "old", "young-probe"][action], fn, fl, line, c0, c1,
                                                  sampled, counted, bound, thr))
        else:
            raise Damage("unknown record kind %d at byte %d" % (kind, p))
        if r.p != r.end:
            raise Damage("record at byte %d: fields do not fill it" % p)
        p += 8 + n
    if cur is not None and tail == "none":
        tail = "snapshot %d unfinished" % cur["num"]
    elif cur is not None:
        tail = "snapshot %d unfinished, %s" % (cur["num"], tail)
    out.append("tail: " + tail)
    return out


def name(r, strings):
    i = r.varint()
    if i >= len(strings):
        raise Damage("string %d not defined at byte %d" % (i, r.p))
    return strings[i]


def read_path(r, strings, cur):
    pid = r.varint()
    if pid >= cur["allocs"] or pid in cur["ids"]:
        raise Damage("path id %d (allocs %d) at byte %d" % (pid, cur["allocs"], r.p))
    cur["ids"].add(pid)
    kind = r.varint()
    if kind == 0:
        root = "global " + name(r, strings)
    elif kind == 1:
        fn, fl, line, local, slot = name(r, strings), name(r, strings), r.varint(), name(r, strings), r.varint()
        root = "local %s of %s (%s:%d)" % (local or "#%d" % slot, fn, fl, line)
    elif kind == 2:
        root = "C root #%d" % r.varint()
    elif kind == 3:
        root = "exception"
    elif kind == 4:
        root = "profiler state"
    else:
        raise Damage("root kind %d" % kind)
    hops = []
    nh = r.varint()
    if nh > 256:
        raise Damage("%d hops" % nh)
    for _ in range(nh):
        hk, count = r.varint(), r.varint()
        if hk >= len(HOPS) or count == 0:
            raise Damage("hop %d x%d" % (hk, count))
        text = HOPS[hk]
        if hk == 0:
            text += " " + name(r, strings)
        elif hk == 5:
            text += " " + name(r, strings) + " #%d" % r.varint()
        elif hk in (1, 2, 9):
            text += " %d" % r.varint()
        hops.append(text + (" x%d" % count if count > 1 else ""))
    return (pid, "path %d %s%s" % (pid, root, "".join(" | " + h for h in hops)))


def main():
    args = sys.argv[1:]
    want = "--paths" in args
    args = [a for a in args if a != "--paths"]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        for line in read(args[0], want):
            print(line)
    except Damage as e:
        print("%s: damaged: %s" % (args[0], e), file=sys.stderr)
        sys.exit(1)
    except BrokenPipeError:
        sys.stderr.close()   # a reader that stopped early (grep -q) is not an error


main()
