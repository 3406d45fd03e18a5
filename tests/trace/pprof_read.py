#!/usr/bin/env python3
"""pprof_read.py - an independent reader of pprof profiles (google/pprof's
proto/profile.proto, uncompressed or gzipped), written from the .proto's
field numbers alone, for the tests of the VM's --memtrace-pprof-dir
(tests/suites/snapshots.sh).

usage: pprof_read.py FILE    prints
         types T/U T/U ...           the sample types, in order
         default T                   the default sample type
         period T/U N                the period type and period
         time NANOS
         comment TEXT                (each)
         sample V1,V2,... holder=H | FUNCTION FILE:LINE < ... (leaf first)
         total V1,V2,...
Anything malformed (a truncated number or field, a wire type the schema
does not have, an index outside the string table, a location or function id
not defined) exits 1 saying where."""
import gzip
import sys


class Bad(Exception):
    pass


def varint(d, p, end):
    v, shift = 0, 0
    while True:
        if p >= end:
            raise Bad("truncated varint at byte %d" % p)
        b = d[p]
        p += 1
        v |= (b & 0x7F) << shift
        if not b & 0x80:
            return v, p
        shift += 7
        if shift > 63:
            raise Bad("varint wider than 64 bits at byte %d" % p)


def fields(d, start, end):
    """(field number, wire type, value or (start, end)) of one message."""
    p = start
    while p < end:
        key, p = varint(d, p, end)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, p = varint(d, p, end)
            yield num, 0, v
        elif wt == 2:
            n, p = varint(d, p, end)
            if p + n > end:
                raise Bad("field %d runs past its message at byte %d" % (num, p))
            yield num, 2, (p, p + n)
            p += n
        else:
            raise Bad("wire type %d (field %d) at byte %d" % (wt, num, p))


def ints(d, wt, v):
    """A repeated integer field's values: packed or one."""
    if wt == 0:
        return [v]
    out, p = [], v[0]
    while p < v[1]:
        x, p = varint(d, p, v[1])
        out.append(x)
    return out


def signed(x):
    return x - (1 << 64) if x >= 1 << 63 else x


def read(path):
    d = open(path, "rb").read()
    if d[:2] == b"\x1f\x8b":
        d = gzip.decompress(d)
    strings, types, samples, locations, functions = [], [], [], {}, {}
    prof = {"comment": [], "time": 0, "period": 0, "period_type": None, "default": 0}
    for num, wt, v in fields(d, 0, len(d)):
        if num == 6 and wt == 2:
            strings.append(d[v[0]:v[1]].decode("utf-8", "replace"))
        elif num == 1 and wt == 2:
            t = dict((n, x) for n, w, x in fields(d, *v) if w == 0)
            types.append((t.get(1, 0), t.get(2, 0)))
        elif num == 2 and wt == 2:
            s = {"locs": [], "values": [], "labels": []}
            for n, w, x in fields(d, *v):
                if n == 1:
                    s["locs"] += ints(d, w, x)
                elif n == 2:
                    s["values"] += [signed(i) for i in ints(d, w, x)]
                elif n == 3 and w == 2:
                    s["labels"].append(dict((k, y) for k, _, y in fields(d, *x)))
            samples.append(s)
        elif num == 4 and wt == 2:
            loc = {"lines": []}
            for n, w, x in fields(d, *v):
                if n == 1:
                    loc["id"] = x
                elif n == 4 and w == 2:
                    loc["lines"].append(dict((k, y) for k, _, y in fields(d, *x)))
            locations[loc.get("id", 0)] = loc
        elif num == 5 and wt == 2:
            f = dict((n, x) for n, w, x in fields(d, *v) if w == 0)
            functions[f.get(1, 0)] = f
        elif num == 9 and wt == 0:
            prof["time"] = v
        elif num == 11 and wt == 2:
            t = dict((n, x) for n, w, x in fields(d, *v) if w == 0)
            prof["period_type"] = (t.get(1, 0), t.get(2, 0))
        elif num == 12 and wt == 0:
            prof["period"] = v
        elif num == 13:
            prof["comment"] += ints(d, wt, v)
        elif num == 14 and wt == 0:
            prof["default"] = v

    def s(i):
        if i >= len(strings):
            raise Bad("string index %d outside the table of %d" % (i, len(strings)))
        return strings[i]

    if not strings or strings[0] != "":
        raise Bad("the string table does not start with \"\"")
    out = ["types " + " ".join("%s/%s" % (s(t), s(u)) for t, u in types), "default " + s(prof["default"])]
    if prof["period_type"]:
        out.append("period %s/%s %d" % (s(prof["period_type"][0]), s(prof["period_type"][1]), prof["period"]))
    out.append("time %d" % prof["time"])
    out += ["comment " + s(c) for c in prof["comment"]]
    total = [0] * len(types)
    for smp in samples:
        if len(smp["values"]) != len(types):
            raise Bad("a sample has %d values for %d types" % (len(smp["values"]), len(types)))
        frames = []
        for lid in smp["locs"]:
            if lid not in locations:
                raise Bad("location %d is not defined" % lid)
            for line in locations[lid]["lines"]:
                fid = line.get(1, 0)
                if fid not in functions:
                    raise Bad("function %d is not defined" % fid)
                f = functions[fid]
                frames.append("%s %s:%d" % (s(f.get(2, 0)), s(f.get(4, 0)), line.get(2, 0)))
        labels = " ".join("%s=%s" % (s(lb.get(1, 0)), s(lb.get(2, 0)) if lb.get(2) else lb.get(3, 0))
                          for lb in smp["labels"])
        out.append("sample %s %s | %s" % (",".join(map(str, smp["values"])), labels, " < ".join(frames)))
        total = [a + b for a, b in zip(total, smp["values"])]
    out.append("total " + ",".join(map(str, total)))
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    try:
        print("\n".join(read(sys.argv[1])))
    except (Bad, OSError, EOFError) as e:
        print("pprof_read.py: %s: %s" % (sys.argv[1], e), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
