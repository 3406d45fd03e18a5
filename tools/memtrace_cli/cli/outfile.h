// outfile.h - the output file of a memtrace command (-o OUT), which never
// destroys an input (issue 23, class 1). A command writes at most one file;
// this module keeps its state (one per process).
// 1. An output that names the same file as an input (the same device and
//    inode: through a symbolic or a hard link too; "-" is standard input) is
//    refused before anything is opened for writing. So is standard output
//    when it is an input's file (`memtrace dump t.ctf >> t.ctf` would read
//    what it appends), and OUT when it is standard output's file (`timeline
//    -o X.svg --csv > X.svg`: the rename would orphan what stdout got).
//    A trace's end state counts as an input: its companion T.ctf.retain,
//    whether or not the command reads it, and the file given by --retain.
// 2. A regular file, or a new name, is written under a temporary name in the
//    same directory (".memtrace-XXXXXX.EXT", created exclusively, with the
//    final file's mode, and written through the descriptor that created it) and
//    renamed onto OUT when the command ends and keeps it: a run that fails
//    (the trace cannot be read, the output cannot be written, the process
//    exits) leaves OUT as it was, absent or with its old contents, and no
//    half-written file. An existing OUT is replaced by a new file (another
//    hard link to the old one keeps the old contents); a symbolic link is
//    followed (its target is replaced). Anything else (a terminal, a pipe,
//    /dev/null) is written in place. The temporary is removed on every way
//    out: the end of the command, exit(), and the signals that end a process
//    (SIGINT, SIGTERM, SIGHUP, SIGPIPE...: removed, then the process dies of
//    the signal); only SIGKILL can leave it.
#ifndef MINNOW_MEMTRACE_OUTFILE_H
#define MINNOW_MEMTRACE_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>


// `command` names the command in messages ("top": "memtrace top: ...").
// Part 1: OUT (NULL or "-": standard output) against the inputs, their
// companions and `end_state` (--retain FILE, or NULL). Returns true, or
// false after printing "memtrace CMD: ..." (the caller exits 2).
bool outfile_check(const char *command, const char *out, char *const *inputs, unsigned n_inputs,
                   const char *end_state);

// Part 2: the name to create and write instead of `path` (a temporary
// beside it, or `path` itself), or NULL after printing "memtrace CMD:
// cannot create PATH: reason". The name keeps `path`'s extension.
const char *outfile_begin(const char *command, const char *path);

// A new descriptor (close-on-exec) or stream writing what outfile_begin
// returned: the temporary's own file (never reopened by name), or `name`
// opened for writing when it is written in place. -1 / NULL with errno set.
int outfile_fd(const char *name);
FILE *outfile_stream(const char *name);

// The run failed: the temporary (if any) is removed and OUT left alone.
void outfile_discard(void);

// At the end of the command, which returned `status`: a pending temporary
// is renamed onto OUT unless discarded or status is 2 (usage). Returns
// status, or 1 after printing why the rename failed.
int outfile_finish(int status);

#endif
