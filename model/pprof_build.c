/* pprof_build.c — see pprof_build.h for the contract. */
#include "pprof_build.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "stats.h"
#include "util.h"

struct loc {
  uint64_t mapping, address, function; /* function: Python locations only */
  int64_t line;
  struct gt_pprof_line *lines;
  size_t nlines;
};

struct mapping {
  uint64_t start, limit, offset;
  int64_t file, build_id;
};

struct sample {
  uint64_t *locs;
  size_t nlocs;
  int64_t values[GT_PPROF_MAX_TYPES];
  int64_t label_key[GT_PPROF_MAX_LABELS], label_str[GT_PPROF_MAX_LABELS],
      label_num[GT_PPROF_MAX_LABELS];
  size_t nlabels;
};

struct gt_pprof {
  size_t ntypes, headline;
  int64_t type[GT_PPROF_MAX_TYPES], unit[GT_PPROF_MAX_TYPES];
  struct gt_strtab strings;
  struct gt_map fn_index, loc_index, map_index, sample_index; /* hash -> id */
  uint64_t *fns;                                              /* name << 32 | file */
  int64_t *fn_shown; /* each function's Function.system_name */
  size_t nfns, cfns, cfn_shown;
  struct loc *locs;
  size_t nlocs, clocs;
  struct mapping *maps;
  size_t nmaps, cmaps;
  struct sample *samples;
  size_t nsamples, csamples;
};

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}

struct gt_pprof *gt_pprof_new(const char *const *types, const char *const *units,
                              size_t ntypes, size_t headline) {
  struct gt_pprof *p = gt_xcalloc(1, sizeof *p);
  gt_map_init(&p->fn_index);
  gt_map_init(&p->loc_index);
  gt_map_init(&p->map_index);
  gt_map_init(&p->sample_index);
  gt_strtab_intern(&p->strings, ""); /* string_table[0] must be "" */
  p->ntypes = ntypes < GT_PPROF_MAX_TYPES ? ntypes : GT_PPROF_MAX_TYPES;
  for (size_t i = 0; i < p->ntypes; i++) {
    p->type[i] = gt_pprof_string(p, types[i]);
    p->unit[i] = gt_pprof_string(p, units[i]);
  }
  p->headline = headline < p->ntypes ? headline : 0;
  return p;
}

int64_t gt_pprof_string(struct gt_pprof *p, const char *s) {
  /* a protobuf string is UTF-8: traced text is made so (util.h) */
  char *buf = NULL;
  size_t cap = 0;
  int64_t id =
      (int64_t)gt_strtab_intern(&p->strings, gt_text_utf8(s ? s : "", &buf, &cap));
  free(buf);
  return id;
}

/* Find-or-add by a hash whose entries are checked with same(): probing on
 * to the next hash past a collision. Returns the id (index + 1), or 0 with
 * *slot_hash set to where a new entry goes. */
static uint64_t probe(const struct gt_map *m, uint64_t h, int (*same)(void *, uint64_t),
                      void *ctx, uint64_t *slot_hash) {
  uint64_t id;
  while (gt_map_get(m, h, &id)) {
    if (same(ctx, id))
      return id;
    h = mix(h, 1);
  }
  *slot_hash = h;
  return 0;
}

struct fn_key {
  struct gt_pprof *p;
  uint64_t key;
};
static int same_fn(void *ctx, uint64_t id) {
  struct fn_key *k = ctx;
  return k->p->fns[id - 1] == k->key;
}

uint64_t gt_pprof_function(struct gt_pprof *p, const char *name, const char *file) {
  struct fn_key k = {p, (uint64_t)gt_pprof_string(p, name) << 32 |
                            (uint64_t)gt_pprof_string(p, file)};
  uint64_t h = 0, id = probe(&p->fn_index, mix(1, k.key), same_fn, &k, &h);
  if (id)
    return id;
  p->fns = gt_grow(p->fns, &p->cfns, p->nfns + 1, sizeof *p->fns);
  /* go pprof shortens a C++ name equal to its system name, template
   * arguments and all (`void gemm_tiled<float, 16>(float*, int)` and
   * `void gemm_tiled<int, 8>(int*, int)` both read `void gemm_tiled`); a
   * template's name goes without a system name so that two instances stay
   * two functions (0: the empty string). */
  p->fn_shown = gt_grow(p->fn_shown, &p->cfn_shown, p->nfns + 1, sizeof *p->fn_shown);
  p->fn_shown[p->nfns] = strchr(name, '<') ? 0 : (int64_t)(k.key >> 32);
  p->fns[p->nfns++] = k.key;
  gt_map_put(&p->fn_index, h, p->nfns);
  return p->nfns;
}

uint64_t gt_pprof_mapping(struct gt_pprof *p, uint64_t start, uint64_t limit,
                          uint64_t offset, const char *file, const char *build_id) {
  uint64_t id;
  if (gt_map_get(&p->map_index, start, &id))
    return id;
  p->maps = gt_grow(p->maps, &p->cmaps, p->nmaps + 1, sizeof *p->maps);
  p->maps[p->nmaps++] = (struct mapping){start, limit, offset, gt_pprof_string(p, file),
                                         gt_pprof_string(p, build_id)};
  gt_map_put(&p->map_index, start, p->nmaps);
  return p->nmaps;
}

struct loc_key {
  struct gt_pprof *p;
  uint64_t mapping, address, function;
  int64_t line;
};
static int same_loc(void *ctx, uint64_t id) {
  const struct loc_key *k = ctx;
  const struct loc *l = &k->p->locs[id - 1];
  return l->mapping == k->mapping && l->address == k->address &&
         l->function == k->function && l->line == k->line;
}

static uint64_t add_loc(struct gt_pprof *p, const struct loc_key *k,
                        const struct gt_pprof_line *lines, size_t nlines) {
  uint64_t h = 0, id = probe(&p->loc_index,
                             mix(mix(mix(2, k->mapping), k->address),
                                 k->function ^ (uint64_t)k->line << 1),
                             same_loc, (void *)k, &h);
  if (id)
    return id;
  p->locs = gt_grow(p->locs, &p->clocs, p->nlocs + 1, sizeof *p->locs);
  struct loc *l = &p->locs[p->nlocs++];
  *l = (struct loc){k->mapping, k->address, k->function, k->line, NULL, nlines};
  if (nlines) {
    l->lines = gt_xcalloc(nlines, sizeof *l->lines);
    memcpy(l->lines, lines, nlines * sizeof *lines);
  }
  gt_map_put(&p->loc_index, h, p->nlocs);
  return p->nlocs;
}

uint64_t gt_pprof_native(struct gt_pprof *p, uint64_t mapping_id, uint64_t address,
                         const struct gt_pprof_line *lines, size_t nlines) {
  struct loc_key k = {p, mapping_id, address, 0, 0};
  return add_loc(p, &k, lines, nlines);
}

uint64_t gt_pprof_source(struct gt_pprof *p, uint64_t function_id, int64_t line) {
  struct loc_key k = {p, 0, 0, function_id, line};
  struct gt_pprof_line one = {function_id, line};
  return add_loc(p, &k, &one, 1);
}

struct sample_key {
  struct gt_pprof *p;
  const struct sample *s;
};
static int same_sample(void *ctx, uint64_t id) {
  const struct sample *a = ((struct sample_key *)ctx)->s;
  const struct sample *b = &((struct sample_key *)ctx)->p->samples[id - 1];
  if (a->nlocs != b->nlocs || a->nlabels != b->nlabels ||
      memcmp(a->locs, b->locs, a->nlocs * sizeof *a->locs) != 0)
    return 0;
  for (size_t i = 0; i < a->nlabels; i++)
    if (a->label_key[i] != b->label_key[i] || a->label_str[i] != b->label_str[i] ||
        a->label_num[i] != b->label_num[i])
      return 0;
  return 1;
}

void gt_pprof_add(struct gt_pprof *p, const uint64_t *locs, size_t nlocs,
                  const int64_t *values, const struct gt_pprof_label *labels,
                  size_t nlabels) {
  struct sample s = {(uint64_t *)locs, nlocs, {0}, {0}, {0}, {0}, 0};
  uint64_t h = 3;
  for (size_t i = 0; i < nlocs; i++)
    h = mix(h, locs[i]);
  for (size_t i = 0; i < nlabels && i < GT_PPROF_MAX_LABELS; i++, s.nlabels++) {
    s.label_key[i] = gt_pprof_string(p, labels[i].key);
    s.label_str[i] = labels[i].str ? gt_pprof_string(p, labels[i].str) : 0;
    s.label_num[i] = labels[i].str ? 0 : labels[i].num;
    h = mix(mix(mix(h, (uint64_t)s.label_key[i]), (uint64_t)s.label_str[i]),
            (uint64_t)s.label_num[i]);
  }
  struct sample_key k = {p, &s};
  uint64_t slot = 0, id = probe(&p->sample_index, h, same_sample, &k, &slot);
  if (!id) {
    p->samples = gt_grow(p->samples, &p->csamples, p->nsamples + 1, sizeof *p->samples);
    s.locs = gt_xcalloc(nlocs ? nlocs : 1, sizeof *s.locs);
    memcpy(s.locs, locs, nlocs * sizeof *locs);
    p->samples[p->nsamples++] = s;
    gt_map_put(&p->sample_index, slot, id = p->nsamples);
  }
  for (size_t i = 0; i < p->ntypes; i++)
    p->samples[id - 1].values[i] += values[i];
}

void gt_pprof_totals(const struct gt_pprof *p, int64_t *out) {
  for (size_t i = 0; i < p->ntypes; i++)
    out[i] = 0;
  for (size_t s = 0; s < p->nsamples; s++)
    for (size_t i = 0; i < p->ntypes; i++)
      out[i] += p->samples[s].values[i];
}

/* ---- serialization ---- */

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

/* Every allocation of one serialization, freed together. */
struct arena {
  void **ptrs;
  size_t n, cap;
};
static void *arena_alloc(struct arena *a, size_t n, size_t size) {
  a->ptrs = gt_grow(a->ptrs, &a->cap, a->n + 1, sizeof *a->ptrs);
  return a->ptrs[a->n++] = gt_xcalloc(n ? n : 1, size);
}
static void arena_free(struct arena *a) {
  for (size_t i = 0; i < a->n; i++)
    free(a->ptrs[i]);
  free(a->ptrs);
}

static void fill_samples(const struct gt_pprof *p, Profile *pr, struct arena *a) {
  pr->n_sample = p->nsamples;
  pr->sample = arena_alloc(a, p->nsamples, sizeof *pr->sample);
  Sample *ss = arena_alloc(a, p->nsamples, sizeof *ss);
  for (size_t i = 0; i < p->nsamples; i++) {
    const struct sample *s = &p->samples[i];
    perftools__profiles__sample__init(&ss[i]);
    ss[i].n_location_id = s->nlocs;
    ss[i].location_id = s->locs;
    ss[i].n_value = p->ntypes;
    ss[i].value = (int64_t *)s->values;
    Label *ls = arena_alloc(a, s->nlabels, sizeof *ls);
    ss[i].n_label = s->nlabels;
    ss[i].label = arena_alloc(a, s->nlabels, sizeof *ss[i].label);
    for (size_t k = 0; k < s->nlabels; k++) {
      perftools__profiles__label__init(&ls[k]);
      ls[k].key = s->label_key[k];
      ls[k].str = s->label_str[k];
      ls[k].num = s->label_num[k];
      ss[i].label[k] = &ls[k];
    }
    pr->sample[i] = &ss[i];
  }
}

static void fill_locations(const struct gt_pprof *p, Profile *pr, struct arena *a) {
  pr->n_location = p->nlocs;
  pr->location = arena_alloc(a, p->nlocs, sizeof *pr->location);
  Location *ls = arena_alloc(a, p->nlocs, sizeof *ls);
  for (size_t i = 0; i < p->nlocs; i++) {
    const struct loc *l = &p->locs[i];
    perftools__profiles__location__init(&ls[i]);
    ls[i].id = i + 1;
    ls[i].mapping_id = l->mapping;
    ls[i].address = l->address;
    Line *lines = arena_alloc(a, l->nlines, sizeof *lines);
    ls[i].n_line = l->nlines;
    ls[i].line = arena_alloc(a, l->nlines, sizeof *ls[i].line);
    for (size_t k = 0; k < l->nlines; k++) {
      perftools__profiles__line__init(&lines[k]);
      lines[k].function_id = l->lines[k].function_id;
      lines[k].line = l->lines[k].line;
      ls[i].line[k] = &lines[k];
    }
    pr->location[i] = &ls[i];
  }
}

static void fill_tables(const struct gt_pprof *p, Profile *pr, struct arena *a) {
  pr->n_function = p->nfns;
  pr->function = arena_alloc(a, p->nfns, sizeof *pr->function);
  Function *fs = arena_alloc(a, p->nfns, sizeof *fs);
  for (size_t i = 0; i < p->nfns; i++) {
    perftools__profiles__function__init(&fs[i]);
    fs[i].id = i + 1;
    fs[i].name = (int64_t)(p->fns[i] >> 32);
    fs[i].system_name = p->fn_shown[i];
    fs[i].filename = (int64_t)(p->fns[i] & 0xffffffffu);
    pr->function[i] = &fs[i];
  }
  pr->n_mapping = p->nmaps;
  pr->mapping = arena_alloc(a, p->nmaps, sizeof *pr->mapping);
  Mapping *ms = arena_alloc(a, p->nmaps, sizeof *ms);
  for (size_t i = 0; i < p->nmaps; i++) {
    perftools__profiles__mapping__init(&ms[i]);
    ms[i].id = i + 1;
    ms[i].memory_start = p->maps[i].start;
    ms[i].memory_limit = p->maps[i].limit;
    ms[i].file_offset = p->maps[i].offset;
    ms[i].filename = p->maps[i].file;
    ms[i].build_id = p->maps[i].build_id;
    ms[i].has_functions = ms[i].has_filenames = ms[i].has_line_numbers =
        ms[i].has_inline_frames = 1;
    pr->mapping[i] = &ms[i];
  }
  pr->n_sample_type = p->ntypes;
  pr->sample_type = arena_alloc(a, p->ntypes, sizeof *pr->sample_type);
  ValueType *vs = arena_alloc(a, p->ntypes + 1, sizeof *vs);
  for (size_t i = 0; i <= p->ntypes; i++)
    perftools__profiles__value_type__init(&vs[i]);
  for (size_t i = 0; i < p->ntypes; i++) {
    vs[i].type = p->type[i];
    vs[i].unit = p->unit[i];
    pr->sample_type[i] = &vs[i];
  }
  vs[p->ntypes] = vs[p->headline];
  pr->period_type = &vs[p->ntypes];
  pr->period = 1;
  pr->default_sample_type = p->ntypes ? p->type[p->headline] : 0;
  pr->n_string_table = p->strings.n;
  pr->string_table = p->strings.strs;
}

/* The packed profile, gzipped into `fd` (closed); 0 or -1 with errno. */
static int write_gz(int fd, const uint8_t *buf, size_t len) {
  gzFile gz = gzdopen(fd, "wb6");
  if (gz == NULL) {
    close(fd);
    return -1;
  }
  size_t off = 0;
  while (off < len) {
    unsigned chunk = len - off > (1u << 30) ? 1u << 30 : (unsigned)(len - off);
    if (gzwrite(gz, buf + off, chunk) != (int)chunk) {
      gzclose(gz);
      errno = errno ? errno : EIO;
      return -1;
    }
    off += chunk;
  }
  return gzclose(gz) == Z_OK ? 0 : -1;
}

/* The profile, packed: a malloc'd buffer of *len bytes. */
static uint8_t *pack(struct gt_pprof *p, int64_t time_nanos, int64_t duration_nanos,
                     size_t *len) {
  Profile pr;
  perftools__profiles__profile__init(&pr);
  struct arena a = {0};
  fill_samples(p, &pr, &a);
  fill_locations(p, &pr, &a);
  fill_tables(p, &pr, &a);
  pr.time_nanos = time_nanos;
  pr.duration_nanos = duration_nanos;
  *len = perftools__profiles__profile__get_packed_size(&pr);
  uint8_t *buf = gt_xcalloc(*len ? *len : 1, 1);
  perftools__profiles__profile__pack(&pr, buf);
  arena_free(&a);
  return buf;
}

int gt_pprof_write_fd(struct gt_pprof *p, int fd, const char *name, int64_t time_nanos,
                      int64_t duration_nanos, char *err, size_t errlen) {
  size_t len;
  uint8_t *buf = pack(p, time_nanos, duration_nanos, &len);
  int rc = write_gz(fd, buf, len);
  if (rc != 0)
    snprintf(err, errlen, "cannot write %s: %s", name, strerror(errno));
  free(buf);
  return rc;
}

int gt_pprof_write(struct gt_pprof *p, const char *path, int64_t time_nanos,
                   int64_t duration_nanos, char *err, size_t errlen) {
  /* Not mkstemp: its 0600 would keep a sidecar of another user out; the
   * umask decides, as for the trace. O_EXCL: a planted name is not used. */
  static unsigned serial;
  char tmp[PATH_MAX];
  int fd = -1;
  if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), serial++) <
      (int)sizeof tmp)
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) {
    snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
    return -1;
  }
  if (gt_pprof_write_fd(p, fd, tmp, time_nanos, duration_nanos, err, errlen) != 0) {
    unlink(tmp);
    return -1;
  }
  if (rename(tmp, path) != 0) {
    snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
    unlink(tmp);
    return -1;
  }
  return 0;
}

void gt_pprof_free(struct gt_pprof *p) {
  if (p == NULL)
    return;
  for (size_t i = 0; i < p->nlocs; i++)
    free(p->locs[i].lines);
  for (size_t i = 0; i < p->nsamples; i++)
    free(p->samples[i].locs);
  free(p->locs);
  free(p->samples);
  free(p->fns);
  free(p->fn_shown);
  free(p->maps);
  gt_map_free(&p->fn_index);
  gt_map_free(&p->loc_index);
  gt_map_free(&p->map_index);
  gt_map_free(&p->sample_index);
  gt_strtab_free(&p->strings);
  free(p);
}
