#!/usr/bin/env python3
"""holders_agree.py - the three views of a snapshot's holders agree
(tests/suites/trace_differential.sh, issue 32).

    holders_agree.py LEAKS.json PATHS.json TOP.json

LEAKS.json is `memtrace leaks --all -n 0 --json`, PATHS.json `memtrace paths
--by holder --json`, TOP.json `memtrace top --live --by holder -n 0 --json`,
all of one trace and one snapshot file. Each lists the holders of the same
snapshot (the end state, else the last usable one): leaks under "leaks" and
"not_leaking" (its "holders" count says how many), paths under "holders",
top under "rows". A holder is its erased PATH (the JSON object, compared
whole); for each, the three must give the same sampled blocks, samples and
bytes (leaks' kept_bytes; equal to 1e-9 relative: the same product printed
by one JSON writer). The three must name the same snapshot (their
"end_state" objects equal) and, when none is usable, list nothing.
Prints each disagreement; exit 0 when they agree, 1 when not, 2 on input
that is not the commands' JSON.
"""
import json
import sys


def holders(doc, lists, bytes_key):
    """{erased path as canonical JSON: [blocks, samples, bytes]} summed."""
    out = {}
    for name in lists:
        for h in doc.get(name) or []:
            key = json.dumps(h["holder"], sort_keys=True)
            row = out.setdefault(key, [0, 0, 0.0])
            row[0] += h["blocks"]
            row[1] += h["samples"]
            row[2] += h[bytes_key]
    return out


def main(argv):
    if len(argv) != 4:
        print("usage: holders_agree.py LEAKS.json PATHS.json TOP.json", file=sys.stderr)
        return 2
    try:
        docs = []
        for path in argv[1:]:
            with open(path, encoding="utf-8") as f:
                docs.append(json.load(f))
        leaks, paths, top = docs
        views = {
            "leaks": holders(leaks, ["leaks", "not_leaking"], "kept_bytes"),
            "paths --by holder": holders(paths, ["holders"], "bytes"),
            "top --live --by holder": holders(top, ["rows"], "bytes"),
        }
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"holders_agree: not the commands' JSON: {e!r}")
        return 2
    problems = []
    if leaks.get("holders") != sum(len(leaks.get(k) or []) for k in ("leaks", "not_leaking")):
        problems.append(f"leaks says {leaks.get('holders')} holders and lists "
                        f"{sum(len(leaks.get(k) or []) for k in ('leaks', 'not_leaking'))}")
    ends = {name: json.dumps(d.get("end_state"), sort_keys=True) for name, d in
            zip(views, (leaks, paths, top))}
    if len(set(ends.values())) != 1:
        problems.append("they describe the snapshots differently: " +
                        "; ".join(f"{n}: {e[:300]}" for n, e in ends.items()))
    (first, ref), *others = views.items()
    for name, view in others:
        for key in sorted(set(ref) | set(view)):
            a, b = ref.get(key), view.get(key)
            if a is None or b is None:
                problems.append(f"holder {key[:200]}: {first} {a}, {name} {b}")
            elif a[:2] != b[:2] or abs(a[2] - b[2]) > 1e-9 * max(abs(a[2]), abs(b[2]), 1.0):
                problems.append(f"holder {key[:200]}: {first} blocks/samples/bytes {a}, {name} {b}")
    for p in problems[:10]:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
