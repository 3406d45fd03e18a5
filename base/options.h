// options.h - one option table for every command line of the project (./vm,
// each command of tools/memtrace): a program describes its options as an
// array of Option and hands each word that starts with '-' to option_take.
// Accepted:
//   --name VALUE, --name=VALUE    an option that takes a value
//   -x VALUE, -xVALUE             the same, for a one-letter option
//   --flag, -f                    an option without value (--flag=V is refused)
// An option's value is the next word whatever it starts with ("--at -1s"
// reads "-1s", and its parser refuses it). An option given twice is
// refused: which one would count is a guess the user should not have to
// make. A refusal is one line of text (no program name, no newline), for the
// caller to print after its own prefix:
//   unknown option '--liv' (did you mean --live?)
//   option -n given twice
//   option --live takes no value (got '--live=1')
//   option -n needs a value (N)
//   option --by: 'nothing' is not site, function or file
// Depends on base/number.h and base/suggest.h only.
#ifndef MINNOW_BASE_OPTIONS_H
#define MINNOW_BASE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct Option Option;

// Reads `text` into o->target; false when it is not a good value.
typedef bool OptionParse(const Option *o, const char *text);

struct Option {
  const char *name;         // "--by", "-n": two dashes, or one dash and one letter
  const char *value;        // NULL: a flag (target is bool *); else its name in the usage ("N")
  void *target;
  OptionParse *parse;       // NULL: the text itself (target is const char **)
  const char *expected;     // with parse: what a good value is ("'x' is not EXPECTED")
  double min, max;          // the range of the numeric parsers
};

// A count from min to max (decimal digits) into a uint32_t / uint64_t.
OptionParse option_parse_u32;
OptionParse option_parse_u64;
// A finite decimal from min to max into a double (number.h's syntax).
OptionParse option_parse_number;
// A sampling rate in (0, 1] into a double (number.h); min and max unused.
OptionParse option_parse_rate;

// The option `word` names (a long one up to its '=', a short one by its
// first two bytes), or NULL.
const Option *option_find(const Option *options, size_t n, const char *word);

// Takes the option argv[*i] (a word starting with '-', other than "-" and
// "--") and its value, advancing *i past a value given as the next word.
// seen[k]: options[k] was given already (set here). False after a refusal,
// whose text is written to err (err_len > 0).
bool option_take(const Option *options, size_t n, bool *seen, int argc, char **argv, int *i, char *err,
                 size_t err_len);

#endif
