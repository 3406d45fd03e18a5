#!/usr/bin/env python3
"""tools_check.py - checks of tests/suites/trace_tools.sh that read the JSON of
tools/memtrace: the documented schemas (tools/memtrace_cli/README.md, "JSON")
and the known-mix truths (tests/tools/known_mix.mn).

  tools_check.py schema COMMAND FILE.json       the document matches COMMAND's schema
  tools_check.py mix ALLOC.json LIVE.json PROMOTED.json N F [exact]
      one line per (site, measure): "in SITE MEASURE" when the truth lies in the
      95 % interval (with "exact": when the estimate equals the truth)
  tools_check.py life LIFETIMES.json              known-mix lifetimes: "young", "promoted",
      "major" lines, each True or False (see check_life)
  tools_check.py get FILE.json EXPR              prints a value (EXPR: Python on `d`)

Every check prints "ok NAME" or "fail NAME: why"; the exit status is 0 when
none failed. Standard library only.
"""
import json
import sys

# ---------------------------------------------------------------- schemas
# A spec is a type name ("str", "int", "num", "bool", "null", "alive"), a
# tuple of alternatives, a dict (an object with exactly these members; a key
# ending in "?" is optional) or a one-element list (an array of that).

INTERVAL = {"lo": "num", "hi": "num"}
TRACE = {"file": "str", "executable": "str", "format_version": "int", "sample_rate": "num",
         "word_bytes": "int", "duration_s": "num", "events": "int", "samples": "int"}
PLAIN_FRAME = ({"function": "str", "file": "str", "line": "int", "start_col": "int", "end_col": "int"},
               {"code": "int"})
# A stack's entry: a frame, or folded recursion (a run of a frame or cycle).
FRAME = PLAIN_FRAME + ({"repeat": "int", "frames": [PLAIN_FRAME]},)
# A stack past --max-frames: the one element {"frames_left_out": N}.
LEFT_OUT = {"frames_left_out": "int"}
FRAME = FRAME + (LEFT_OUT,)
SITE_FIELDS = {"site": "str", "function": ("str", "null"), "file": ("str", "null"),
               "line": ("int", "null"), "start_col": ("int", "null"), "end_col": ("int", "null")}
KEY = (SITE_FIELDS, dict(SITE_FIELDS, stack=[FRAME]), {"function": "str", "file": "str"}, {"file": "str"})
COMMON = {"command": "str", "partial": "bool", "error": ("str", "null")}
QUANTILES = {q: ("num", "null", "alive") for q in ("p50", "p90", "p99")}
SIDE = {"bytes": "num", "interval": INTERVAL, "samples": "int"}
SNAPSHOT = {"number": "int", "trigger": "str", "time_s": "num", "alloc_count": "int", "usable": "bool",
            "why?": "str", "collected": "bool", "every_path": "bool", "live_samples": "int", "paths": "int",
            "marked_blocks": "int", "marked_words": "int", "heap_words": "int", "pause_s": "num", "paths_s": "num",
            "reason": "str"}
SNAPSHOTS = {"status": "str", "file": ("str", "null"), "why?": "str", "fix?": "str", "tail?": "str",
             "end_state": ("int", "null"), "shown": ("int", "null"), "list": [SNAPSHOT]}
ROOT = {"kind": "str", "name?": "str", "file?": "str", "line?": "int", "local?": "str", "index?": "int"}
PATH = {"root": ROOT, "hops": [{"kind": "str", "count?": "int", "index?": "int", "name?": "str"}]}
CALLERS = [({"frames": [({"function": "str", "file": "str", "line": "int"}, {"code": "int"})], "repeat": "int"},
            LEFT_OUT)]
KEPT_SITE_FIELDS = dict(SITE_FIELDS, **{"allocating_site?": SITE_FIELDS})
KEPT_SITE = {"site": KEPT_SITE_FIELDS, "depth": "int", "blocks": "int", "samples": "int", "kept_bytes": "num",
             "kept_bytes_interval": INTERVAL, "path": (PATH, "null"), "callers": CALLERS}
GROWTH = {"persist": "int", "grew": "int", "let_go": "int", "p": "num", "grew_last": "int", "let_go_last": "int"}
HOLDER = {"rank": "int", "verdict": "str", "holder_text": ("str", "null"), "holder": (PATH, "null"),
          "example_path?": PATH, "blocks": "int", "samples": "int", "kept_bytes": "num",
          "kept_bytes_interval": INTERVAL, "allocated_samples": "int", "kept_share": "num",
          "kept_share_interval": INTERVAL, "window_samples": ["int"], "third_quarter_blocks": "int",
          "last_quarter_blocks": "int", "chain_links": "int", "storage_links": "int", "chain_last_at": "num", "series_samples": (["int"], "null"), "growth": (GROWTH, "null"),
          "sites": [KEPT_SITE]}

DECISION = {"action": "str", "evidence": "str", "time_s": ("num", "null"), "alloc_count": "int",
            "site": {"function": "str", "file": "str", "line": "int", "first_col": "int", "last_col": "int"},
            "sampled": "int", "counted": "int", "bound": "num", "threshold": "num"}

SCHEMAS = {
    "top": dict(COMMON, trace=TRACE, metric="str", by="str", at_s=("num", "null"), at_in_trace="bool",
                total={"bytes": "num", "interval": INTERVAL, "samples": "int", "sampled_blocks": "int"},
                rows=[{"rank": "int", "key": KEY, "bytes": "num", "interval": INTERVAL, "share": "num",
                       "samples": "int", "sampled_blocks": "int", "blocks_estimate": ("num", "null")}],
                rows_omitted="int"),
    "lifetimes": dict(COMMON, trace=TRACE, by="str", minor_heap_words=("int", "null"),
                      clock_resolution_bytes="num",
                      rows=[{"rank": "int", "key": KEY, "bytes": "num", "samples": "int",
                             "sampled_blocks": "int", "minor_blocks": "int", "promoted_blocks": "int",
                             "promoted_share": ("num", "null"), "promoted_interval": INTERVAL,
                             "died_young_blocks": "int", "alive_at_end_share": ("num", "null"),
                             "lifetime_us": QUANTILES, "lifetime_alloc_bytes": QUANTILES,
                             "minor_gcs_estimate": QUANTILES, "major_blocks": "int",
                             "pretenured": [DECISION]}],
                      rows_omitted="int",
                      pretenure_decisions={"file": ("str", "null"), "count": "int", "not_shown": "int"}),
    "leaks": dict(COMMON, trace=TRACE, snapshots=SNAPSHOTS, judgement="str",
                  rule={"name": "str", "series": ["int"], "alpha": "num", "eligible": "int", "windows": "int",
                        "min_samples": "int", "min_trace_samples": "int"},
                  kept_samples="int", holders="int", too_few="int", leaks=[HOLDER], leaks_omitted="int",
                  **{"why?": "str", "fix?": "str", "not_leaking?": [HOLDER]}),
    "paths": dict(COMMON, trace=TRACE, snapshots=SNAPSHOTS, by="str",
                  **{"why?": "str",
                     "paths?": [{"alloc_id": "int", "samples": "int", "site": SITE_FIELDS, "path": PATH}],
                     "holders?": [{"holder": (PATH, "null"), "blocks": "int", "samples": "int", "bytes": "num",
                                   "sites": [dict(KEPT_SITE_FIELDS, depth="int", samples="int")]}]}),
    "top_holder": dict(COMMON, trace=TRACE, metric="str", by="str", snapshots=SNAPSHOTS,
                       rows=[{"rank": "int", "holder": (PATH, "null"), "bytes": "num", "interval": INTERVAL,
                              "samples": "int", "blocks": "int", "verdict": ("str", "null")}]),
    "diff": dict(COMMON, a=TRACE, b=TRACE, metric="str", by="str", keys_compared="int", alpha="num",
                 total={"a": SIDE, "b": SIDE, "change_bytes": "num", "p": "num"},
                 rows=[{"rank": "int", "key": KEY, "a": SIDE, "b": SIDE, "change_bytes": "num",
                        "ratio": ("num", "null"), "p": "num", "significant": "bool"}],
                 rows_omitted="int"),
    "info": dict(COMMON, file="str", format_version="int", executable="str", host="str", pid="int",
                 runtime_params="str", context="str", word_bits="int", sample_rate="num", start_us="int",
                 duration_s=("num", "null"), first_event_s=("num", "null"),
                 events={"total": "int", "allocations": "int", "promotions": "int", "collections": "int"},
                 allocations={"minor": "int", "major": "int", "external": "int", "samples": "int",
                              "sampled_words": "int", "words_estimate": "num"},
                 backtraces={"deepest": "int", "mean_depth": "num", "new_frames_per_allocation": "num"},
                 locations={"codes": "int", "events": "int"},
                 packets={"count": "int", "skipped": "int", "skipped_bytes": "int"},
                 bytes={"total": "int", "headers": "int", "trace_info": "int", "locations": "int",
                        "backtraces": "int", "events": "int"},
                 snapshots=SNAPSHOTS, decisions=[DECISION]),
    "timeline": dict(COMMON, trace=TRACE, by="str", bands=["str"],
                     points=[{"time_s": "num", "bytes": ["num"], "total_bytes": "num"}]),
    "flamegraph": dict(COMMON, trace=TRACE, metric="str", frames_by="str", total_bytes="num",
                       stacks=[{"frames": [{"function": "str", "file": "str", "line": "int", "repeat?": "int"}],
                                "bytes": "num"}],
                       left_out=({"stacks": "int", "frames": "int", "bytes": "num"}, "null")),
}


def conforms(value, spec, path, errors):
    """Appends to errors why value does not match spec; True when it does."""
    if isinstance(spec, tuple):
        for alternative in spec:
            if conforms(value, alternative, path, []):
                return True
        errors.append(f"{path}: {json.dumps(value)[:60]} matches none of its alternatives")
        return False
    if isinstance(spec, list):
        if not isinstance(value, list):
            errors.append(f"{path}: not an array")
            return False
        return all([conforms(v, spec[0], f"{path}[{i}]", errors) for i, v in enumerate(value)])
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            errors.append(f"{path}: not an object")
            return False
        ok = True
        wanted = {k.rstrip("?"): (s, k.endswith("?")) for k, s in spec.items()}
        for k in value:
            if k not in wanted:
                errors.append(f"{path}: unexpected member {k!r}")
                ok = False
        for k, (s, optional) in wanted.items():
            if k not in value:
                if not optional:
                    errors.append(f"{path}: missing member {k!r}")
                    ok = False
            elif not conforms(value[k], s, f"{path}.{k}", errors):
                ok = False
        return ok
    checks = {
        "str": lambda v: isinstance(v, str),
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "num": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "bool": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
        "alive": lambda v: v == "alive",
    }
    if not checks[spec](value):
        errors.append(f"{path}: {json.dumps(value)[:60]} is not {spec}")
        return False
    return True


def check_schema(command, path):
    with open(path) as f:
        text = f.read()
    try:
        doc = json.loads(text)
    except ValueError as e:
        return [f"not JSON: {e}"]
    errors = []
    conforms(doc, SCHEMAS[command], command, errors)
    if not errors and doc["command"] != command:
        errors.append(f"command is {doc['command']!r}")
    return errors

# ---------------------------------------------------------------- known mix

WORD = 8


def mix_truth(n, f):
    """Words per (line, measure) of known_mix.mn, headers included."""
    return {
        8: {"allocated": 101, "live": 101, "promoted": 101},
        9: {"allocated": n // 100 + 1, "live": n // 100 + 1, "promoted": n // 100 + 1},
        11: {"allocated": 4 * n, "live": 0, "promoted": 0},
        12: {"allocated": 6 * (n // 2), "live": 600, "promoted": 600},
        13: {"allocated": 301 * (n // 100), "live": 301 * (n // 100), "promoted": 0},
        14: {"allocated": 14 * f * (n // 4), "live": 0, "promoted": 0},
    }


def rows_by_line(doc):
    rows = {}
    for r in doc["rows"]:
        k = r["key"]
        if k.get("file", "") and k["file"].endswith("known_mix.mn"):
            rows[k["line"]] = r
    return rows


def check_mix(paths, n, f, exact):
    results = []
    truth = mix_truth(n, f)
    for path, measure in zip(paths, ("allocated", "live", "promoted")):
        with open(path) as fh:
            rows = rows_by_line(json.load(fh))
        for line, t in truth.items():
            want = t[measure] * WORD
            name = f"line {line} {measure}"
            r = rows.get(line)
            if r is None:
                # No row: no samples; the truth must fit in an empty tally's interval.
                results.append((name, want == 0 or not exact, "no row" if want else ""))
                continue
            if exact:
                results.append((name, r["bytes"] == want, f"{r['bytes']} != {want}"))
            else:
                lo, hi = r["interval"]["lo"], r["interval"]["hi"]
                results.append((name, lo <= want <= hi, f"{want} not in [{lo:.0f}, {hi:.0f}]"))
    return results


def check_life(path):
    """Lifetimes of the known mix (rate 1e-2, no collection before the end):
    young: tuples (line 11) never promoted, every sampled one died young, ~GCs 0;
    promoted: records (line 12), 100 of 10,000 kept: 1 % in the promoted interval;
    major: arrays born major (line 13) have no minor block, all alive at the end."""
    with open(path) as fh:
        rows = rows_by_line(json.load(fh))
    t, r, a = rows[11], rows[12], rows[13]
    return {
        "young": t["promoted_blocks"] == 0 and t["died_young_blocks"] == t["sampled_blocks"]
        and t["minor_gcs_estimate"]["p50"] == 0,
        "promoted": r["promoted_interval"]["lo"] <= 0.01 <= r["promoted_interval"]["hi"],
        "major": a["minor_blocks"] == 0 and a["promoted_share"] is None and a["alive_at_end_share"] == 1,
    }


def main(argv):
    if len(argv) >= 3 and argv[0] == "schema":
        errors = check_schema(argv[1], argv[2])
        name = f"schema {argv[1]} {argv[2]}"
        print(f"ok {name}" if not errors else f"fail {name}: " + "; ".join(errors[:5]))
        return 1 if errors else 0
    if len(argv) >= 6 and argv[0] == "mix":
        results = check_mix(argv[1:4], int(argv[4]), int(argv[5]), len(argv) > 6 and argv[6] == "exact")
        for name, good, why in results:
            print(f"in {name}" if good else f"out {name}: {why}")
        return 0
    if len(argv) == 2 and argv[0] == "life":
        for name, good in check_life(argv[1]).items():
            print(name, good)
        return 0
    if len(argv) == 3 and argv[0] == "get":
        with open(argv[1]) as fh:
            d = json.load(fh)
        print(eval(argv[2], {"d": d}))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
