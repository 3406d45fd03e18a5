// decisions_show.c - pretenuring decisions as text and JSON (decisions_show.h).
#include "decisions_show.h"

#include <inttypes.h>

const SnapshotReader *decisions_reader(const Snapshots *s) {
  return s->status == SNAPSHOTS_DAMAGED ? NULL : s->reader;
}

void decision_print_site(FILE *f, const SnapshotDecision *x) {
  fprintf(f, "%s %s:%" PRIu64 ":%" PRIu64 "-%" PRIu64, x->function, x->file, x->line, x->first_col, x->last_col);
}

void decision_print(FILE *f, const SnapshotDecision *x, uint64_t start_us) {
  char a[OUT_TEXT_MAX];
  fprintf(f, "%s", x->action == 1 ? "switched old" : "undone, young again");
  if (x->time_us >= start_us) fprintf(f, " at %s", out_duration(a, (double)(x->time_us - start_us)));
  else fprintf(f, " before the trace's start (stamped %" PRIu64 " us since the epoch)", x->time_us);
  fprintf(f, ", after %" PRIu64 " of the trace's allocations: of the %" PRIu64 " blocks %s the feedback sampled, %" PRIu64
          " %s", x->alloc_count, x->sampled,
          x->action == 1   ? "born young"
          : x->action == 2 ? "born young in a probe"
                           : "born old",
          x->counted,
          x->action == 1   ? "were promoted"
          : x->action == 2 ? "died at the next minor collection"
                           : "died at their first major cycle");
  fprintf(f, " (share >= %.4f > %.4g)", (double)x->bound_millionths / 1e6, (double)x->threshold_millionths / 1e6);
}

void decision_json(Json *j, const char *key, const SnapshotDecision *x, uint64_t start_us) {
  json_object(j, key);
  json_string(j, "action", decision_action_name(x->action));
  json_string(j, "evidence", x->action == 1   ? "promoted"
                             : x->action == 2 ? "probe"
                                              : "first_major_cycle");
  if (x->time_us >= start_us) json_number(j, "time_s", (double)(x->time_us - start_us) / 1e6);
  else json_null(j, "time_s");
  json_uint(j, "alloc_count", x->alloc_count);
  json_object(j, "site");
  json_string(j, "function", x->function);
  json_string(j, "file", x->file);
  json_uint(j, "line", x->line);
  json_uint(j, "first_col", x->first_col);
  json_uint(j, "last_col", x->last_col);
  json_end_object(j);
  json_uint(j, "sampled", x->sampled);
  json_uint(j, "counted", x->counted);
  json_number(j, "bound", (double)x->bound_millionths / 1e6);
  json_number(j, "threshold", (double)x->threshold_millionths / 1e6);
  json_end_object(j);
}
