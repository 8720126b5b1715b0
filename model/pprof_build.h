/* pprof_build.h — a pprof profile (proto/profile.proto) built in memory and
 * written gzip-compressed, for `gputrace pprof` (cmd_pprof.c).
 *
 * Contract:
 *  - Strings, functions (name, file), mappings (range, file, build id) and
 *    locations are interned: asking twice for the same one gives the same
 *    id. Ids start at 1 (0 means "none", as in profile.proto). Strings
 *    are stored as valid UTF-8 (gt_text_utf8: each invalid byte as
 *    U+FFFD), as protobuf's string type requires.
 *  - A native location is keyed by (mapping, address) and carries its
 *    symbolized lines (innermost first, inline frames included); a Python
 *    location by (function, line), with no mapping or address.
 *  - Samples with the same locations and labels are merged: values add up.
 *    Values are int64 per sample type, in the order given at creation.
 *  - gt_pprof_write serializes with libprotobuf-c and gzips with zlib, into
 *    a temporary file in the target's directory renamed over the target
 *    (a reader never sees half a profile: live profiles for a sidecar);
 *    gt_pprof_write_fd into a descriptor the caller opened (gputrace pprof,
 *    through outfile.h's rules). 0 on success; -1 with a message.
 */
#ifndef GPUTRACE_MODEL_PPROF_BUILD_H
#define GPUTRACE_MODEL_PPROF_BUILD_H

#include <stddef.h>
#include <stdint.h>

#define GT_PPROF_MAX_TYPES 4
#define GT_PPROF_MAX_LABELS 4

struct gt_pprof;

struct gt_pprof_label {
  const char *key;
  const char *str; /* a string label, or NULL for a numeric one */
  int64_t num;
};

struct gt_pprof_line {
  uint64_t function_id;
  int64_t line;
};

/* types[i] / units[i]: e.g. "alloc_space" / "bytes". types[headline] is
 * the profile's default_sample_type and period type: the figure go tool
 * pprof shows without -sample_index (which would otherwise be the last). */
struct gt_pprof *gt_pprof_new(const char *const *types, const char *const *units,
                              size_t ntypes, size_t headline);
void gt_pprof_free(struct gt_pprof *p);

int64_t gt_pprof_string(struct gt_pprof *p, const char *s);
uint64_t gt_pprof_function(struct gt_pprof *p, const char *name, const char *file);
uint64_t gt_pprof_mapping(struct gt_pprof *p, uint64_t start, uint64_t limit,
                          uint64_t offset, const char *file, const char *build_id);
/* A native frame: lines innermost first (NULL/0: unsymbolized). */
uint64_t gt_pprof_native(struct gt_pprof *p, uint64_t mapping_id, uint64_t address,
                         const struct gt_pprof_line *lines, size_t nlines);
/* A Python frame (or any frame known only by function and line). */
uint64_t gt_pprof_source(struct gt_pprof *p, uint64_t function_id, int64_t line);

/* Add values to the sample of `locs` (leaf first) with these labels. */
void gt_pprof_add(struct gt_pprof *p, const uint64_t *locs, size_t nlocs,
                  const int64_t *values, const struct gt_pprof_label *labels,
                  size_t nlabels);

/* Totals of each sample type over every sample (for tests and messages). */
void gt_pprof_totals(const struct gt_pprof *p, int64_t *out);

int gt_pprof_write(struct gt_pprof *p, const char *path, int64_t time_nanos,
                   int64_t duration_nanos, char *err, size_t errlen);
/* The same into an open descriptor (closed after), `name` for messages. */
int gt_pprof_write_fd(struct gt_pprof *p, int fd, const char *name, int64_t time_nanos,
                      int64_t duration_nanos, char *err, size_t errlen);

#endif
