"""check_mix.py N ALLOC.json LIVE.json: for each site of tests/pretenure/mix.mn
(line 3 pairs, 4 triples, 7 cons cells), whether `memtrace top`'s 95 % interval
of bytes allocated and of bytes live at the end holds the truth. Prints one
line a (line, measure): "in line L MEASURE" or "out line L MEASURE: why"."""
import json
import sys

WORD = 8


def rows(path):
    with open(path) as fh:
        doc = json.load(fh)
    out = {}
    for r in doc["rows"]:
        k = r["key"]
        if k.get("file", "").endswith("mix.mn"):
            out[k["line"]] = r
    return out


def main(argv):
    n = int(argv[0])
    truth = {3: (3 * n, 3 * n), 4: (4 * n, 0), 7: (3 * n, 3 * n)}
    for path, m, name in ((argv[1], 0, "allocated"), (argv[2], 1, "live")):
        got = rows(path)
        for line, t in sorted(truth.items()):
            want = t[m] * WORD
            r = got.get(line)
            if r is None:
                ok, why = want == 0, "no row"
            else:
                lo, hi = r["interval"]["lo"], r["interval"]["hi"]
                ok, why = lo <= want <= hi, f"{want} not in [{lo:.0f}, {hi:.0f}]"
            print(("in" if ok else "out") + f" line {line} {name}" + ("" if ok else ": " + why))


if __name__ == "__main__":
    main(sys.argv[1:])
