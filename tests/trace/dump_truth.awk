# dump_truth.awk - what the trace tools' renderers must print for a trace,
# computed from its `memtrace dump` text (dump.c: memtrace's dump_trace
# layout) independently of their code: the estimates are sums of
# n_samples x bytes per sample (word bytes / rate).
#   awk -v mode=MODE -v rate=R [-v word=8] [-v times=FILE] -f dump_truth.awk DUMP
# mode:
#   folded        "a (f:l);b (f:l) N" per distinct stack, bytes allocated
#   folded_live   the same, of blocks never collected
#   folded_fn     frames as function names only, bytes allocated
#   totals        "allocated A live L samples S blocks B" (B: sampled blocks)
#   live_at       for each time (seconds, one per line of FILE, increasing):
#                 "T LIVE", LIVE the bytes of blocks allocated at or before T
#                 and not collected at or before it
# Dump lines: "TIME ID alloc N len=L P: frame..." (alloc_major, alloc_ext
# too), each frame "function@file:line:start-end" or "$code";
# "TIME ID promote" and "TIME ID collect".

function frame_text(tok, by_function,   at, rest, n, parts) {
  if (substr(tok, 1, 1) == "$") return tok
  at = index(tok, "@")
  if (by_function) return substr(tok, 1, at - 1)
  rest = substr(tok, at + 1)
  n = split(rest, parts, ":")
  # file may hold ':'; the last two fields are the line and the columns
  file = parts[1]
  for (i = 2; i <= n - 2; i++) file = file ":" parts[i]
  return substr(tok, 1, at - 1) " (" file ":" parts[n - 1] ")"
}

# Frames lo..hi joined by ';', halves first: O(length x log frames) where
# appending frame by frame would be quadratic on 85,000-frame stacks.
function join(lo, hi, by_function,   mid) {
  if (lo == hi) return frame_text($lo, by_function)
  mid = int((lo + hi) / 2)
  return join(lo, mid, by_function) ";" join(mid + 1, hi, by_function)
}

function stack_of(by_function) {
  return NF < 7 ? "(no backtrace)" : join(7, NF, by_function)
}

function flush_until(t) {  # live_at: report every asked time before t
  while (next_time <= n_times && time_list[next_time] < t) {
    printf "%s %.0f\n", time_text[next_time], live_samples * bytes
    next_time++
  }
}

BEGIN {
  bytes = (word ? word : 8) / rate
  n_times = 0
  if (mode == "live_at") {
    while ((getline line < times) > 0) {
      n_times++
      time_text[n_times] = line
      time_list[n_times] = int(line * 1e6 + 0.5)
    }
    next_time = 1
  }
}

$3 ~ /^alloc/ {
  if (mode == "live_at") flush_until($1 + 0)
  n = $4 + 0
  blocks++
  samples += n
  live_samples += n
  alive[$2] = n
  if (mode == "folded" || mode == "folded_fn") {
    key = stack_of(mode == "folded_fn")
    sum[key] += n
  } else if (mode == "folded_live") {
    stack[$2] = stack_of(0)
  }
  next
}

$3 == "collect" {
  if (mode == "live_at") flush_until($1 + 0)
  live_samples -= alive[$2]
  delete alive[$2]
  delete stack[$2]
  next
}

END {
  if (mode == "live_at") {
    flush_until(1e300)
  } else if (mode == "totals") {
    printf "allocated %.0f live %.0f samples %d blocks %d\n", samples * bytes, live_samples * bytes, samples, blocks
  } else {
    if (mode == "folded_live")
      for (id in stack) sum[stack[id]] += alive[id]
    for (key in sum) if (sum[key] > 0) printf "%s %.0f\n", key, sum[key] * bytes
  }
}
