#!/usr/bin/env python3
"""leaks_check.py - what the leak benchmark (bench/leaks_eval.sh) and the
servers' suite (tests/suites/leak_servers.sh) share:

  truth PROGRAM            a program's ground truth, as shell assignments:
                           truth (leak|none), root, lines, requests
  check-truth PROGRAM      exit 1 (saying why) unless the truth-lines of the
                           header are exactly the lines marked "// <- leak"
  snapshots FILE           counts of FILE's (T.ctf.retain) snapshots:
                           "BEGUN WHOLE" (0 0 when the file is absent)
  wait FILE N [TIMEOUT [PID]]  waits until FILE holds N whole snapshots
                           (polling every 20 ms); exit 0, or 1 after TIMEOUT
                           seconds (default 120) or once process PID is gone,
                           with the counts reached on stderr
  ends FILE                one CSV row per whole snapshot: number, trigger,
                           time_us, alloc_count, flags, live_samples, paths,
                           marked_blocks, marked_words, heap_words, pause_us,
                           paths_us
  judge JSON PROGRAM [WHY] reads `memtrace leaks --json` and the program's
                           truth; prints one CSV fragment (JUDGE_FIELDS); with
                           WHY (the run or the tool failed), outcomes "error"

The snapshot file is read as docs/trace-format.md section 12.1 lays it out
(version 2): a header, then records (u32 length, u32 CRC-32, body); a
version-1 file (12.3, the end state alone) as one snapshot, its header's
figures only. A record
cut short by the end of the file is one still being written: reading stops
before it. A snapshot is whole when its end record has been read. A CRC that
does not match, or a version other than 2, is an error (exit 2).

Ground truth: a program states it in comment lines "// truth: leak" or
"// truth: none", "// truth-root: global NAME" or "// truth-root: stack
FUNCTION LOCAL", "// truth-lines: L1 L2 ..." (the lines that allocate what
leaks or put it in its holder) and "// bench-requests: N" (servers: the
request count of a run to the end). bench/servers/*.mn hold them in their
header; bench/leaks/*.mn at their end, so that the lines quoted elsewhere
stay where they are.

Judging. A *suspect* is a site under a leak, in the order `leaks` lists
them (leaks by rank, then each leak's sites), named by its holder's root and
its *user line*: the innermost frame of the site's callstack that is not in
the standard library (stdlib/), so that the cells Hashtbl.replace allocates
count as the line that calls it. Suspects with the same root and user line
are one. (line_rank_strict ranks the sites by their own innermost frame
instead, stdlib frames included: how a reader who does not look past a
stdlib frame would rank them; reported, not a floor.) Outcomes:
  series (killed after snapshots): a leaking program passes when the first
    leak's holder has the truth's root; a program that does not leak passes
    when the verdict is judged and names no leak.
  end (end state only): a leaking program passes when one of the first three
    suspects has the truth's root and one of its lines; a program that does
    not leak is "flagged" when any leak is named.
  "cannot" when `leaks` could not judge (never a pass).
"""
import json
import os
import re
import struct
import sys
import time
import zlib

MAGIC = b"MNRETAIN"
REC_STRINGS, REC_BEGIN, REC_PATHS, REC_END = 1, 2, 3, 4


class Damaged(Exception):
    pass


def varint(buf, pos):
    """An unsigned LEB128 at buf[pos:], as (value, next position)."""
    value = shift = 0
    while True:
        if pos >= len(buf):
            raise Damaged("varint runs past its record")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos
        if shift > 63:
            raise Damaged("varint longer than 64 bits")


class SnapshotFile:
    """Reads a growing T.ctf.retain incrementally: poll() reads what has been
    appended since the last call, whole records only."""

    def __init__(self, path):
        self.path = path
        self.offset = 0
        self.header = False
        self.begun = 0
        self.ends = []  # dicts, one a whole snapshot

    def poll(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return
        pos = 0
        if not self.header:
            if len(data) < len(MAGIC) + 1:
                return
            if data[:8] != MAGIC:
                raise Damaged(f"{self.path}: no MNRETAIN magic")
            if data[8] == 1:
                self.read_version_1(data)
                self.offset = len(data)
                return
            if data[8] != 2:
                raise Damaged(f"{self.path}: version {data[8]}, neither 1 nor 2")
            try:
                _, p = varint(data, 9)
                _, p = varint(data, p)
            except Damaged:
                return  # the header itself is still being written
            self.header = True
            pos = p
        while pos + 8 <= len(data):
            length, crc = struct.unpack_from("<II", data, pos)
            if pos + 8 + length > len(data):
                break  # being written, or cut by the run's death
            body = data[pos + 8:pos + 8 + length]
            if zlib.crc32(body) & 0xFFFFFFFF != crc:
                raise Damaged(f"{self.path}: CRC mismatch at byte {self.offset + pos}")
            self.record(body)
            pos += 8 + length
        self.offset += pos

    def read_version_1(self, data):
        """A version-1 file (the end state alone, written before snapshots,
        section 12.3): read as one whole snapshot, trigger 0, from its header;
        heap words unknown (0), the pause the collection's and the walk's."""
        p = 9
        v = {}
        try:
            for name in ("pid", "start", "alloc_count", "time_us", "flags", "live_samples",
                         "marked_blocks", "marked_words", "collection_us", "paths_us"):
                v[name], p = varint(data, p)
        except Damaged:
            return  # still being written (it is written whole, then renamed)
        self.header = True
        self.begun = 1
        self.ends.append({"number": 0, "trigger": 0, "time_us": v["time_us"], "alloc_count": v["alloc_count"],
                          "flags": v["flags"], "live_samples": v["live_samples"], "paths": v["live_samples"],
                          "marked_blocks": v["marked_blocks"], "marked_words": v["marked_words"], "heap_words": 0,
                          "pause_us": v["collection_us"] + v["paths_us"], "paths_us": v["paths_us"]})

    def record(self, body):
        kind = body[0]
        if kind == REC_BEGIN:
            number, p = varint(body, 1)
            trigger, p = varint(body, p)
            t, p = varint(body, p)
            allocs, p = varint(body, p)
            self.begun += 1
            self.pending = {"number": number, "trigger": trigger, "time_us": t, "alloc_count": allocs}
        elif kind == REC_END:
            fields = ["number", "flags", "live_samples", "paths", "marked_blocks", "marked_words",
                      "heap_words", "pause_us", "paths_us"]
            p = 1
            end = {}
            for name in fields:
                end[name], p = varint(body, p)
            begin = getattr(self, "pending", None)
            if begin is None or begin["number"] != end["number"]:
                raise Damaged(f"{self.path}: end of snapshot {end['number']} without its begin")
            end.update({k: begin[k] for k in ("trigger", "time_us", "alloc_count")})
            self.ends.append(end)
            self.pending = None


END_COLUMNS = ["number", "trigger", "time_us", "alloc_count", "flags", "live_samples", "paths",
               "marked_blocks", "marked_words", "heap_words", "pause_us", "paths_us"]


def alive(pid):
    """Whether process pid runs (a zombie, dead but not yet waited for by its
    parent, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def read_truth(program):
    truth = {"truth": None, "root": "", "lines": [], "requests": 0, "marked": []}
    with open(program, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = re.match(r"^// (truth|truth-root|truth-lines|bench-requests): *(.*?)\s*$", line)
            if m:
                key, value = m.groups()
                if key == "truth":
                    truth["truth"] = value
                elif key == "truth-root":
                    truth["root"] = value
                elif key == "truth-lines":
                    truth["lines"] = [int(x) for x in value.split()]
                else:
                    truth["requests"] = int(value)
            if re.search(r"//\s*<- leak\b", line):
                truth["marked"].append(n)
    if truth["truth"] not in ("leak", "none"):
        raise SystemExit(f"{program}: no '// truth: leak' or '// truth: none' line")
    if truth["truth"] == "leak" and (not truth["root"] or not truth["lines"]):
        raise SystemExit(f"{program}: a leaking program needs truth-root and truth-lines")
    return truth


def root_matches(root, truth_root):
    """Whether a holder's root (leaks --json) is the truth's: "global NAME" or
    "stack FUNCTION LOCAL"."""
    want = truth_root.split()
    if not want or not root:
        return False
    if want[0] == "global":
        return root.get("kind") == "global" and root.get("name") == want[1]
    if want[0] == "stack":
        return root.get("kind") == "stack" and root.get("name") == want[1] and root.get("local") == want[2]
    return False


def root_text(root):
    if not root:
        return "?"
    if root.get("kind") == "global":
        return "global " + str(root.get("name"))
    if root.get("kind") == "stack":
        return f"stack {root.get('name')} {root.get('local') or '#' + str(root.get('index'))}"
    return str(root.get("kind"))


def user_line(site):
    """The innermost frame of a site's callstack outside stdlib/: (file, line)."""
    frames = [site.get("site") or {}]
    for c in site.get("callers") or []:
        frames.extend(c.get("frames") or [])
    for fr in frames:
        f = fr.get("file") or ""
        if f and not f.startswith("stdlib/"):
            return f, fr.get("line")
    return "?", 0


def is_leak(holder):
    return str(holder.get("verdict", "leak")).startswith("leak")


JUDGE_FIELDS = ["samples", "judgement", "leaks_named", "first_root", "holder_rank", "line_rank",
                "line_rank_strict", "suspects", "outcome_series", "outcome_end"]


def judge(doc, program, truth):
    leaks = [l for l in doc.get("leaks") or [] if is_leak(l)]
    judged = doc.get("judgement") == "judged"
    suspects = []
    strict = []  # the same, by the site's own (innermost) frame
    for l in leaks:
        root = (l.get("holder") or {}).get("root") or {}
        for s in l.get("sites") or []:
            f, line = user_line(s)
            key = (root_text(root), f, line)
            if key not in [k for k, _ in suspects]:
                suspects.append((key, root))
            own = s.get("site") or {}
            key = (root_text(root), own.get("file") or "?", own.get("line"))
            if key not in [k for k, _ in strict]:
                strict.append((key, root))
    holder_rank = 0
    line_rank = line_rank_strict = 0
    first_root = root_text((leaks[0].get("holder") or {}).get("root")) if leaks else ""
    if truth["truth"] == "leak":
        for l in leaks:
            if root_matches((l.get("holder") or {}).get("root"), truth["root"]):
                holder_rank = l.get("rank", leaks.index(l) + 1)
                break
        prog = os.path.normpath(program)

        def rank(listed):
            for i, ((_, f, line), root) in enumerate(listed, 1):
                if root_matches(root, truth["root"]) and os.path.normpath(f) == prog and line in truth["lines"]:
                    return i
            return 0
        line_rank = rank(suspects)
        line_rank_strict = rank(strict)
        series = "pass" if leaks and root_matches((leaks[0].get("holder") or {}).get("root"), truth["root"]) else "fail"
        end = "pass" if 0 < line_rank <= 3 else "fail"
        if not judged:
            series = end = "cannot"
    else:
        series = "pass" if judged and not leaks else ("cannot" if not judged else "fail")
        end = "pass" if judged and not leaks else ("cannot" if not judged else "flagged")
    shown = " | ".join(f"{r} {os.path.basename(f)}:{line}" for (r, f, line), _ in suspects[:3])
    samples = (doc.get("trace") or {}).get("samples", "")
    return [samples, (doc.get("judgement") or "none").replace(" ", "_"), len(leaks), first_root,
            holder_rank, line_rank, line_rank_strict, shown, series, end]


def csv_field(v):
    s = str(v)
    if any(c in s for c in ',"\n'):
        s = '"' + s.replace('"', '""') + '"'
    return s


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    cmd = argv[1]
    if cmd == "truth":
        t = read_truth(argv[2])
        print(f"truth={t['truth']} root='{t['root']}' lines='{' '.join(map(str, t['lines']))}' requests={t['requests']}")
    elif cmd == "check-truth":
        t = read_truth(argv[2])
        if t["truth"] == "leak" and sorted(t["lines"]) != sorted(t["marked"]):
            sys.exit(f"{argv[2]}: truth-lines {t['lines']} but '// <- leak' marks {t['marked']}")
        if t["truth"] == "none" and t["marked"]:
            sys.exit(f"{argv[2]}: truth none but '// <- leak' marks {t['marked']}")
    elif cmd in ("snapshots", "wait", "ends"):
        sf = SnapshotFile(argv[2])
        try:
            if cmd == "wait":
                want = int(argv[3])
                deadline = time.monotonic() + (float(argv[4]) if len(argv) > 4 else 120.0)
                while True:
                    sf.poll()
                    if len(sf.ends) >= want:
                        return 0
                    gone = len(argv) > 5 and not alive(int(argv[5]))
                    if gone or time.monotonic() > deadline:
                        why = "the process ended" if gone else "timed out"
                        print(f"{argv[2]}: {len(sf.ends)} whole snapshots of {want} ({sf.begun} begun): {why}",
                              file=sys.stderr)
                        return 1
                    time.sleep(0.02)
            sf.poll()
        except Damaged as e:
            print(f"leaks_check: {e}", file=sys.stderr)
            return 2
        if cmd == "snapshots":
            print(sf.begun, len(sf.ends))
        else:
            print(",".join(END_COLUMNS))
            for e in sf.ends:
                print(",".join(str(e[c]) for c in END_COLUMNS))
    elif cmd == "judge":
        truth = read_truth(argv[3])
        try:
            with open(argv[2], encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            doc = {"judgement": "no output: " + type(e).__name__}
        row = judge(doc, argv[3], truth)
        if len(argv) > 4:
            row[1] = "error: " + argv[4]
            row[-2] = row[-1] = "error"
        print(",".join(csv_field(v) for v in row))
    else:
        sys.exit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
