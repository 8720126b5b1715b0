/* util.h — helpers shared by the model and its readers (the commands, the
 * collector's live profiles and metrics).
 *
 * Contract:
 *  - gt_map (include/gputrace/map.h) is included for convenience.
 *  - gt_json_str writes a JSON string literal (quotes, escapes, invalid
 *    UTF-8 replaced) for text that came from a traced process.
 *  - gt_demangle returns a malloc'd demangled C++ name, or a copy of the
 *    input when it is not a mangled name.
 */
#ifndef GPUTRACE_MODEL_UTIL_H
#define GPUTRACE_MODEL_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gputrace/map.h"
#include "gputrace/units.h"

void gt_json_str(FILE *out, const char *s);
char *gt_demangle(const char *name);
const char *gt_cuda_error_name(int code);

/* Growable arrays: *p is resized to hold `need` elements of `elem` bytes.
 * Out of memory is fatal (message, exit 2). */
__attribute__((noreturn)) void gt_oom(void); /* "out of memory", exit 2 */
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
