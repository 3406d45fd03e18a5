// version.h - the project's version, printed by `./vm --version` and
// `tools/memtrace --version` (each adds the trace format versions it
// handles, trace/format.h). Raised when a release changes what a user sees:
// the language, a command line, an output's layout.
#ifndef MINNOW_BASE_VERSION_H
#define MINNOW_BASE_VERSION_H

#define MINNOW_VERSION "1.0"

#endif
