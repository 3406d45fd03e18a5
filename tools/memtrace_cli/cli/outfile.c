// outfile.c - the output file that never destroys an input (outfile.h).
//
// 1. The temporary is created by mkstemps (O_CREAT | O_EXCL: never an
//    existing file) and written through the descriptor that created it
//    (outfile_fd, outfile_stream): nothing reopens its name with O_TRUNC.
// 2. Every way out removes it: outfile_finish and outfile_discard, atexit
//    for exit(), and a handler of the signals that end a process by default
//    (HUP, INT, QUIT, PIPE, TERM, ALRM, USR1, USR2, XCPU, XFSZ, VTALRM,
//    PROF), which unlinks it and dies of the signal. The handler reads a
//    copy of the name in static memory (unlink is async-signal-safe);
//    temp_armed says whether that copy names a temporary of ours. SIGKILL
//    cannot be caught: a temporary ".memtrace-XXXXXX.ext" may then stay.
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../../trace/snapshot_file.h"

// Invariant: temp != NULL iff a temporary exists on disk that final (its
// destination) does not yet name; fd is then the descriptor that created it.
static struct {
  char *temp, *final;
  int fd;
  const char *command;
  bool discarded, at_exit, handlers;
} pending = {.fd = -1};

static char temp_copy[PATH_MAX];
static volatile sig_atomic_t temp_armed;

static const int fatal_signals[] = {SIGHUP, SIGINT,  SIGQUIT, SIGPIPE, SIGTERM,  SIGALRM,
                                    SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF};

static void on_fatal_signal(int sig) {
  if (temp_armed) unlink(temp_copy);
  temp_armed = 0;
  signal(sig, SIG_DFL);
  raise(sig);
}

// Installs the handler for each fatal signal not ignored (a signal the
// parent set to SIG_IGN stays ignored, as `nohup` wants).
static void install_handlers(void) {
  for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
    struct sigaction old, sa;
    if (sigaction(fatal_signals[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN) continue;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(fatal_signals[i], &sa, NULL);
  }
}

static bool same_file(const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

// True when OUT (stat'ed as *o) is the file `path`; `path` then names
// itself in the refusal, and `of` the trace it belongs to (NULL: it is one).
static bool is_input(const char *command, const char *out, const struct stat *o, const char *path,
                     const char *of) {
  struct stat in;
  bool is_stdin = strcmp(path, "-") == 0;
  if ((is_stdin ? fstat(0, &in) : stat(path, &in)) != 0 || !same_file(o, &in)) return false;
  const char *what = is_stdin ? "standard input" : path;
  char whose[PATH_MAX + 32] = "";
  if (of) snprintf(whose, sizeof whose, ", the end state of the input %s", of);
  if (!out)
    fprintf(stderr, "memtrace %s: standard output is the input %s%s: refused (it would read what it writes)\n",
            command, what, whose);
  else
    fprintf(stderr, "memtrace %s: the output %s is the input %s%s (the same file): refused\n", command, out, what,
            whose);
  return true;
}

bool outfile_check(const char *command, const char *out, char *const *inputs, unsigned n_inputs,
                   const char *end_state) {
  bool to_stdout = !out || strcmp(out, "-") == 0;
  struct stat o;
  if (to_stdout ? fstat(1, &o) != 0 || !S_ISREG(o.st_mode) : stat(out, &o) != 0) return true;  // not an input
  const char *shown = to_stdout ? NULL : out;
  for (unsigned i = 0; i < n_inputs; i++) {
    if (is_input(command, shown, &o, inputs[i], NULL)) return false;
    if (strcmp(inputs[i], "-") == 0) continue;
    char *companion = retain_file_name(inputs[i]);  // T.ctf.retain, read beside T.ctf
    bool refused = companion && is_input(command, shown, &o, companion, inputs[i]);
    free(companion);
    if (refused) return false;
  }
  if (end_state && n_inputs && is_input(command, shown, &o, end_state, inputs[0])) return false;
  struct stat so;  // timeline -o X.svg --csv > X.svg: the rename would orphan what stdout gets
  if (!to_stdout && fstat(1, &so) == 0 && S_ISREG(so.st_mode) && same_file(&o, &so)) {
    fprintf(stderr, "memtrace %s: the output %s is also standard output: refused\n", command, out);
    return false;
  }
  return true;
}

static void close_fd(void) {
  if (pending.fd >= 0) close(pending.fd);
  pending.fd = -1;
}

static void remove_pending(void) {
  temp_armed = 0;
  if (pending.temp) unlink(pending.temp);
  close_fd();
  free(pending.temp);
  free(pending.final);
  pending.temp = pending.final = NULL;
}

static void at_exit(void) { remove_pending(); }

static const char *refuse(const char *command, const char *path, int err) {
  fprintf(stderr, "memtrace %s: cannot create %s: %s\n", command, path, strerror(err));
  return NULL;
}

const char *outfile_begin(const char *command, const char *path) {
  remove_pending();
  pending.discarded = false;
  pending.command = command;
  struct stat st;
  char *final = NULL;
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) final = realpath(path, NULL);  // dangling: in place
  if (!final && !(final = strdup(path))) return refuse(command, path, ENOMEM);
  mode_t mode;
  if (stat(final, &st) == 0) {
    if (!S_ISREG(st.st_mode)) {  // a device, a pipe, a directory: in place (open says what fails)
      free(final);
      return path;
    }
    if (access(final, W_OK) != 0) {
      free(final);
      return refuse(command, path, errno);
    }
    mode = st.st_mode & 07777;
  } else {
    mode_t mask = umask(0);
    umask(mask);
    mode = 0666 & ~mask;
  }
  const char *slash = strrchr(final, '/');
  const char *base = slash ? slash + 1 : final;
  const char *dot = strrchr(base, '.');
  size_t dir_len = (size_t)(base - final), ext_len = dot && strlen(dot) <= 16 ? strlen(dot) : 0;
  char *temp = malloc(dir_len + ext_len + 32);
  if (!temp) {
    free(final);
    return refuse(command, path, ENOMEM);
  }
  snprintf(temp, dir_len + ext_len + 32, "%.*s.memtrace-XXXXXX%s", (int)dir_len, final, ext_len ? dot : "");
  if (strlen(temp) >= sizeof temp_copy) {
    free(temp);
    free(final);
    return refuse(command, path, ENAMETOOLONG);
  }
  if (!pending.handlers) install_handlers(), pending.handlers = true;
  // Blocked while the name is made and armed: a signal in between would
  // leave a file the handler does not know of.
  sigset_t all, old;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &old);
  int fd = mkstemps(temp, (int)ext_len);
  if (fd >= 0) {
    memcpy(temp_copy, temp, strlen(temp) + 1);
    temp_armed = 1;
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (fd < 0 || fchmod(fd, mode) != 0) {
    int err = errno;
    if (fd >= 0) temp_armed = 0, close(fd), unlink(temp);
    free(temp);
    free(final);
    return refuse(command, path, err);
  }
  pending.temp = temp;
  pending.final = final;
  pending.fd = fd;
  if (!pending.at_exit) pending.at_exit = atexit(at_exit) == 0;
  return temp;
}

int outfile_fd(const char *name) {
  if (pending.temp && name == pending.temp) return fcntl(pending.fd, F_DUPFD_CLOEXEC, 0);
  return open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
}

FILE *outfile_stream(const char *name) {
  int fd = outfile_fd(name);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f && fd >= 0) close(fd);
  return f;
}

void outfile_discard(void) {
  pending.discarded = true;
  remove_pending();
}

int outfile_finish(int status) {
  if (!pending.temp) return status;
  if (status == 2 || pending.discarded) {
    remove_pending();
    return status;
  }
  fflush(stdout);
  close_fd();
  if (rename(pending.temp, pending.final) != 0) {
    fprintf(stderr, "memtrace %s: cannot replace %s: %s\n", pending.command, pending.final, strerror(errno));
    remove_pending();
    return 1;
  }
  temp_armed = 0;
  free(pending.temp);
  free(pending.final);
  pending.temp = pending.final = NULL;
  return status;
}
