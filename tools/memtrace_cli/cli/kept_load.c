// kept_load.c - loading a trace with its end state (kept_load.h).
#include "kept_load.h"

#include <inttypes.h>

int kept_load(const ToolUsage *usage, const char *path, const char *retain, ProfileOptions *opts, const AtTime *at,
              Loaded *l, EndState *es) {
  end_state_watch(es, opts);
  if (load_trace(usage, path, opts, at, l) != 0) {
    end_state_free(es);
    return 1;
  }
  end_state_load(es, path, retain, l->profile, l->partial);
  return 0;
}

void kept_print_end_state(FILE *f, const EndState *es) {
  char a[OUT_TEXT_MAX], b[OUT_TEXT_MAX];
  const RetainHeader *h = &es->retain.header;
  switch (es->status) {
    case END_STATE_PRESENT:
      fprintf(f, "end state: %s: final collection (%s), %" PRIu64 " sampled blocks alive at the end, ", es->file,
              out_duration(a, (double)h->gc_us), h->live_samples);
      if (es->paths) fprintf(f, "%" PRIu64 " paths from the roots (walk %s)\n", es->retain.path_count,
                             out_duration(b, (double)h->walk_us));
      else fprintf(f, "no paths: %s\n", es->why);
      break;
    case END_STATE_ABSENT: fprintf(f, "no end state: %s\n", es->why); break;
    case END_STATE_DAMAGED: fprintf(f, "end state unusable: %s\n", es->why); break;
  }
}

// info_form: "paths" only when present, after "final_collection": true.
static void json_end_state(Json *j, const EndState *es, bool info_form) {
  json_object(j, "end_state");
  json_string(j, "status", end_state_status_name(es->status));
  if (*es->file) json_string(j, "file", es->file);
  else json_null(j, "file");
  if (!info_form) json_bool(j, "paths", es->paths);
  if (es->status != END_STATE_PRESENT) json_string(j, "why", es->why);
  if (es->status == END_STATE_ABSENT) json_string(j, "fix", es->fix);
  if (es->status == END_STATE_PRESENT) {
    const RetainHeader *h = &es->retain.header;
    if (info_form) {
      json_bool(j, "final_collection", true);
      json_bool(j, "paths", es->paths);
    }
    json_uint(j, "live_samples", h->live_samples);
    json_uint(j, "path_count", es->retain.path_count);
    json_uint(j, "reachable_blocks", h->reachable_blocks);
    json_uint(j, "reachable_words", h->reachable_words);
    json_number(j, "final_collection_s", (double)h->gc_us / 1e6);
    json_number(j, "walk_s", (double)h->walk_us / 1e6);
  }
  json_end_object(j);
}

void kept_json_end_state(Json *j, const EndState *es) { json_end_state(j, es, false); }

void kept_json_end_state_info(Json *j, const EndState *es) { json_end_state(j, es, true); }

static int kept_status(const ToolUsage *usage, const EndState *es) {
  if (es->status != END_STATE_DAMAGED) return 0;
  fprintf(stderr, "memtrace %s: %s\n", usage->name, es->why);
  return 1;
}

int kept_close(const ToolUsage *usage, Loaded *l, EndState *es) {
  int status = kept_status(usage, es);
  end_state_free(es);
  status |= load_status(usage, l);
  load_close(l);
  return status;
}
