/* util.h — helpers shared by the model and its readers (the commands, the
 * collector's live profiles and metrics).
 *
 * Contract:
 *  - gt_map (include/gputrace/map.h) is included for convenience.
 *  - gt_json_str writes a JSON string literal (quotes, escapes, invalid
 *    UTF-8 replaced) for text that came from a traced process.
 *  - gt_demangle returns a malloc'd demangled C++ name, or a copy of the
 *    input when it is not a mangled name.
 *  - gt_text_clean, gt_text_width, gt_text_cut, gt_name_fit: the same
 *    text for a terminal or a text format (tables, folded stacks): safe
 *    bytes only, measured and shortened in display columns.
 */
#ifndef GPUTRACE_MODEL_UTIL_H
#define GPUTRACE_MODEL_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gputrace/map.h"
#include "gputrace/units.h"

void gt_json_str(FILE *out, const char *s);
/* The one UTF-8 check of every output (JSON, Chrome, pprof, text): the
 * length of the well-formed sequence at p (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF; an ASCII byte, NUL included, is 1),
 * or 0. */
int gt_utf8_len(const unsigned char *p);
/* s for a line of text (dump): valid UTF-8 as it is; '\\' as "\\\\";
 * '\n', '\t', '\r' as "\\n", "\\t", "\\r"; every other control byte, DEL
 * and each byte of invalid UTF-8 as "\\xHH" (ESC: "\\x1b"), the C1
 * controls U+0080..U+009F as "\\u00HH"; with `quote`,
 * '"' as "\\\"". Nothing that reaches a terminal can move the cursor or
 * start a line. */
void gt_text_escape(FILE *out, const char *s, int quote);

/* The version of the layout of every JSON document the CLI prints (report,
 * leaks and diff --json, chrome's metadata, each line of dump --json): the
 * first key of each, "schema_version". Raised when a field changes meaning
 * or goes away; new fields do not raise it (docs/cli.md). */
#define GT_JSON_SCHEMA_VERSION 1
char *gt_demangle(const char *name);

/* s made safe for a terminal into dst (len bytes): control bytes, C1
 * controls (U+0080..U+009F, 2 bytes) and invalid UTF-8 become '?', one
 * byte each, so a dst of strlen(s) + 1 bytes
 * holds all of it; longer text is cut at a character. Returns dst. */
char *gt_text_clean(char *dst, size_t len, const char *s);
/* s as valid UTF-8 for a store that requires it (SQLite TEXT, CSV): s
 * itself when it is valid, else a copy in *buf (grown as needed; the
 * caller frees it) with each invalid byte as U+FFFD. Control bytes, quotes
 * and newlines are kept: they are data there, not terminal commands. */
const char *gt_text_utf8(const char *s, char **buf, size_t *cap);
/* Display columns of UTF-8 text, as a terminal lays it out: glibc's
 * wcwidth in C.UTF-8 (2 for East Asian wide and fullwidth characters, 0
 * for combining marks and zero-width ones, 1 for the rest, for bytes of
 * invalid UTF-8 and where C.UTF-8 is not installed). The program's locale
 * is not changed. */
int gt_text_width(const char *s);
/* The bytes of s's longest start, whole characters, in `width` columns. */
size_t gt_text_cut(const char *s, int width);
/* A (demangled) name in at most `width` columns, malloc'd: the innermost
 * nested template argument lists (the longest of a depth first) become
 * "<…>" one by one, then the parameter list "(…)", then the outermost
 * template argument lists (which tell a template's instances apart), until
 * it fits; if it still does not, its start is cut ("…::end", from a "::" when the end has
 * one). The
 * '<' and '(' of operator names (operator<, operator<<, operator()) are no
 * brackets. A name that fits is returned whole; a width under 1 gives "".
 * '…' is one column. */
char *gt_name_fit(const char *name, int width);
/* The part of a path after its last '/' (a pointer into path). */
const char *gt_base_name(const char *path);
const char *gt_cuda_error_name(int code);

/* Growable arrays: *p is resized to hold `need` elements of `elem` bytes.
 * Out of memory ends the program, by the front end's policy: gt_oom calls
 * the handler the program's main set (the CLI: message, exit 2; the
 * collector: its socket and lock file released first, exit 1); the library
 * itself never exits. Without a handler: the message, then abort(). */
typedef void (*gt_oom_handler)(void); /* must not return */
void gt_set_oom_handler(gt_oom_handler handler);
__attribute__((noreturn)) void gt_oom(void);
void *gt_grow(void *p, size_t *cap, size_t need, size_t elem);
void *gt_xcalloc(size_t n, size_t elem);
void *gt_xrealloc(void *p, size_t bytes);

/* Find-or-append, the pattern of every per-process, per-thread, per-stream
 * and per-stack table: `index` maps key to a position in `items` (*n of
 * `elem` bytes, *cap allocated). Sets *at to key's position, appending a
 * zeroed element (and *added = 1) when the key is new. Returns the array,
 * which moves when it grows (use it as gt_grow's result). */
void *gt_find_or_add(struct gt_map *index, uint64_t key, void *items, size_t *n,
                     size_t *cap, size_t elem, size_t *at, int *added);

/* String equality (strcmp == 0). */
int gt_streq(const char *a, const char *b);

#endif
