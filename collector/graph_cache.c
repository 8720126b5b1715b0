/* graph_cache.c — how each graph was made, kept for the files of a rolling
 * set (output.c) and repeated into a file just before the file first
 * needs it.
 *
 * Contract (collector.h has the API):
 *  - A graph's making is every record that builds or changes a graph, an
 *    executable or a capture: GRAPH records (captures begun and ended,
 *    instantiations, updates, clones, child and empty nodes, uploads,
 *    destroys, node edits) and the nodes (LAUNCH, MEMCPY, MEMSET, ALLOC and
 *    FREE records flagged GT_F_CAPTURED or GT_F_NODE). The objects a record
 *    names — a graph (a node's stream field, a GRAPH record's graph, a
 *    clone's or a child node's arg), an executable (exec, a graph launch's
 *    kernel field, a node edit's stream field), a capture (its id: GRAPH
 *    capture, a node's corr or mem.capture), a kernel node (its tag,
 *    u.launch.node: added, and edited) — tie records into groups: a group holds every
 * record that names one of its objects, which is what a reader needs to know what its
 * graphs run. Objects are per process.
 *  - gt_graph_cache_put sees every record in the order it goes into the
 *    files. Before a record that names an object whose group the current
 *    file does not hold (a graph launch, an instantiation, a node captured
 *    into a capture begun in an earlier file), it appends that group's
 *    records, in the order they came, flagged GT_F_REPLAYED, after a marker
 *    (a NOTE flagged GT_F_REPLAYED | GT_F_REPLAY_BLOCK, naming the file that
 *    held them last). A file holds a group once, from its first use or from
 *    the record that began it: a file repeats only the graphs it uses,
 *    however many a process keeps.
 *  - A group ends when all its objects have: a graph or an executable
 *    destroyed (by a call that succeeded), a capture ended (EndCapture,
 *    whatever its result). An ended group is forgotten, as is every group of
 *    a process that ended. A call that failed makes no object: it is kept
 *    only in a group it names that exists already. Records that name no
 *    object (cudaProfilerStart/Stop) are not kept.
 *  - Memory: the records of live groups, up to max_bytes (each record
 *    counts its slots and 8 bytes), and their objects' keys. A group that
 *    does not fit is dropped whole and kept no more while it lives, never
 *    repeated in part (a graph with half its nodes would be a wrong
 *    answer): later files hold only what of it they wrote themselves, and
 *    gt_graph_cache_stats counts such groups and their records.
 */
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "gputrace/map.h"

enum { OBJ_GRAPH = 1, OBJ_EXEC = 2, OBJ_CAPTURE = 3, OBJ_NODE = 4 };
enum { MAX_NAMED = 4 };
/* What a GRAPH record's api does beyond naming its fields. */
enum {
  ROLE_ARG_GRAPH = 1,
  ROLE_ENDS_GRAPH = 2,
  ROLE_ENDS_EXEC = 4,
  ROLE_ENDS_CAPTURE = 8
};
#define SEQ_BYTES sizeof(uint64_t) /* each kept record is preceded by its arrival */

struct group {
  int used; /* the slot holds a group */
  uint32_t pid;
  uint32_t live;       /* objects that have not ended */
  uint32_t file;       /* the last file that holds it */
  int dropped;         /* did not fit: nothing of it is kept */
  unsigned char *recs; /* [seq][record], in arrival order unless `unsorted` */
  size_t len, cap;
  uint64_t nrecs, last_seq;
  int unsorted;
  uint64_t unkept; /* dropped: its records not kept */
  uint64_t *objs;  /* its objects' keys */
  size_t nobjs, cobjs;
};

struct named {
  uint64_t key[MAX_NAMED];
  unsigned type[MAX_NAMED];
  unsigned n;
};

struct gt_graph_cache {
  struct gt_map objs; /* object key -> group << 1 | ended */
  struct group *groups;
  size_t ngroups, cgroups;
  uint32_t *spare; /* free group slots */
  size_t nspare, cspare;
  size_t bytes, max_bytes;
  uint64_t seq;
  unsigned char role[GT_API_COUNT];
  struct gt_graph_cache_stats st;
};

/* What a GRAPH record's api ends or names, from its flags (apis.h GT_AF_*). */
static unsigned char role_of(unsigned flags) {
  unsigned char r = 0;
  if (flags & GT_AF_ARG_GRAPH)
    r |= ROLE_ARG_GRAPH;
  if (flags & GT_AF_ENDS_GRAPH)
    r |= ROLE_ENDS_GRAPH;
  if (flags & GT_AF_ENDS_EXEC)
    r |= ROLE_ENDS_EXEC;
  if (flags & GT_AF_CAPTURE_END)
    r |= ROLE_ENDS_CAPTURE;
  return r;
}

struct gt_graph_cache *gt_graph_cache_new(size_t max_bytes) {
  struct gt_graph_cache *c = calloc(1, sizeof *c);
  if (!c)
    return NULL;
  c->max_bytes = max_bytes;
  gt_map_init(&c->objs);
  for (unsigned a = 0; a < GT_API_COUNT; a++)
    c->role[a] = gt_apis[a].kind == GT_KIND_GRAPH ? role_of(gt_apis[a].flags) : 0;
  return c;
}

void gt_graph_cache_free(struct gt_graph_cache *c) {
  if (!c)
    return;
  for (size_t i = 0; i < c->ngroups; i++)
    free(c->groups[i].recs), free(c->groups[i].objs);
  free(c->groups);
  free(c->spare);
  gt_map_free(&c->objs);
  free(c);
}

/* ---- what a record names ---- */

static void name(struct named *nm, uint32_t pid, unsigned type, uint64_t handle) {
  if (type == OBJ_CAPTURE || type == OBJ_NODE)
    handle = (uint32_t)handle; /* records carry a capture's, a node's low 32 bits */
  if (!handle)
    return;
  uint64_t key = gt_pid_key(pid, handle ^ (uint64_t)type << 60);
  for (unsigned i = 0; i < nm->n; i++)
    if (nm->key[i] == key)
      return;
  nm->type[nm->n] = type;
  nm->key[nm->n++] = key;
}

static int node_kind(unsigned kind) {
  return kind == GT_KIND_LAUNCH || kind == GT_KIND_MEMCPY || kind == GT_KIND_MEMSET ||
         kind == GT_KIND_ALLOC || kind == GT_KIND_FREE;
}

/* A node's capture (GT_F_CAPTURED) or graph (GT_F_NODE: the stream field). */
static uint64_t node_field(const struct gt_record *r, int capture) {
  switch (r->kind) {
  case GT_KIND_ALLOC:
  case GT_KIND_FREE:
    return capture ? r->u.mem.capture : r->u.mem.stream;
  case GT_KIND_LAUNCH:
    return capture ? r->u.launch.corr : r->u.launch.stream;
  case GT_KIND_MEMCPY:
    return capture ? r->u.copy.corr : r->u.copy.stream;
  default:
    return capture ? r->u.set.corr : r->u.set.stream;
  }
}

/* The objects `r` names; 1 if it is part of a graph's making (kept), 0 if
 * it only uses them (a graph launch) or is no graph's business. */
static int named_by(const struct gt_graph_cache *c, const struct gt_record *r,
                    struct named *nm) {
  nm->n = 0;
  if (r->kind == GT_KIND_GRAPH) {
    const struct gt_graph_args *a = &r->u.graph;
    name(nm, r->pid, OBJ_GRAPH, a->graph);
    name(nm, r->pid, OBJ_EXEC, a->exec);
    name(nm, r->pid, OBJ_CAPTURE, a->capture);
    if (r->api < GT_API_COUNT && (c->role[r->api] & ROLE_ARG_GRAPH))
      name(nm, r->pid, OBJ_GRAPH, a->arg);
    return 1;
  }
  if (!node_kind(r->kind))
    return 0;
  int graph_launch = r->kind == GT_KIND_LAUNCH && (r->flags & GT_F_GRAPH);
  if (graph_launch) /* an executable: launched, or a child node of a capture */
    name(nm, r->pid, OBJ_EXEC, r->u.launch.kernel);
  if (r->kind == GT_KIND_LAUNCH && (r->flags & GT_F_NODE))
    name(nm, r->pid, OBJ_NODE, r->u.launch.node); /* a kernel node, added or edited */
  if (r->flags & GT_F_CAPTURED)
    name(nm, r->pid, OBJ_CAPTURE, node_field(r, 1));
  else if ((r->flags & GT_F_NODE) && r->api < GT_API_COUNT &&
           (gt_api_flags(r->api) & GT_AF_EDIT))
    name(nm, r->pid, OBJ_EXEC,
         r->u.launch.stream); /* an executable's node (0: a graph's) */
  else if (r->flags & GT_F_NODE)
    name(nm, r->pid, OBJ_GRAPH, node_field(r, 0));
  else
    return 0;
  return 1;
}

/* ---- groups ---- */

static uint32_t group_new(struct gt_graph_cache *c, uint32_t pid, uint32_t file) {
  uint32_t g;
  if (c->nspare) {
    g = c->spare[--c->nspare];
  } else {
    if (c->ngroups == c->cgroups) {
      size_t cap = c->cgroups ? c->cgroups * 2 : 64;
      struct group *p = realloc(c->groups, cap * sizeof *p);
      if (!p)
        return UINT32_MAX;
      c->groups = p;
      c->cgroups = cap;
    }
    g = (uint32_t)c->ngroups++;
  }
  c->groups[g] = (struct group){.used = 1, .pid = pid, .file = file};
  c->st.groups++;
  return g;
}

/* Free a group's records (it did not fit, or it ended). */
static void release_records(struct gt_graph_cache *c, struct group *g) {
  c->bytes -= g->len;
  free(g->recs);
  g->recs = NULL;
  g->len = g->cap = 0;
  g->nrecs = 0;
}

static void group_forget(struct gt_graph_cache *c, uint32_t gi) {
  struct group *g = &c->groups[gi];
  release_records(c, g);
  for (size_t i = 0; i < g->nobjs; i++)
    gt_map_del(&c->objs, g->objs[i]);
  free(g->objs);
  if (g->dropped) {
    c->st.dropped_groups--;
    c->st.dropped_records -= g->unkept;
  }
  *g = (struct group){0};
  c->st.groups--;
  if (c->nspare == c->cspare) {
    size_t cap = c->cspare ? c->cspare * 2 : 64;
    uint32_t *p = realloc(c->spare, cap * sizeof *p);
    if (!p)
      return; /* the slot stays unused */
    c->spare = p;
    c->cspare = cap;
  }
  c->spare[c->nspare++] = gi;
}

/* Nothing more of the group is kept while it lives: counted. */
static void group_drop(struct gt_graph_cache *c, struct group *g) {
  if (g->dropped)
    return;
  g->unkept = g->nrecs;
  c->st.dropped_groups++;
  c->st.ever_dropped_groups++;
  c->st.dropped_records += g->nrecs;
  c->st.ever_dropped_records += g->nrecs;
  release_records(c, g);
  g->dropped = 1;
}

/* An object of group gi; on failure it is not tracked at all (a later
 * record naming it starts a new group). */
static void add_obj(struct gt_graph_cache *c, uint32_t gi, uint64_t key, int ended) {
  struct group *g = &c->groups[gi];
  if (g->nobjs == g->cobjs) {
    size_t cap = g->cobjs ? g->cobjs * 2 : 4;
    uint64_t *p = realloc(g->objs, cap * sizeof *p);
    if (!p) {
      gt_map_del(&c->objs, key);
      return;
    }
    g->objs = p;
    g->cobjs = cap;
  }
  if (gt_map_put(&c->objs, key, (uint64_t)gi << 1 | (unsigned)ended) != 0)
    return;
  g->objs[g->nobjs++] = key;
  g->live += !ended;
}

static int reserve(unsigned char **buf, size_t *cap, size_t need) {
  if (need <= *cap)
    return 0;
  size_t n = *cap ? *cap : 4096;
  while (n < need)
    n *= 2;
  unsigned char *p = realloc(*buf, n);
  if (!p)
    return -1;
  *buf = p;
  *cap = n;
  return 0;
}

/* Move group b into group a (both held by this file). */
static void merge(struct gt_graph_cache *c, uint32_t ai, uint32_t bi) {
  struct group *a = &c->groups[ai], *b = &c->groups[bi];
  if (!a->dropped && !b->dropped && b->len &&
      reserve(&a->recs, &a->cap, a->len + b->len) != 0)
    group_drop(c, a);
  if (a->dropped || b->dropped) { /* one dropped group, with both their counts */
    group_drop(c, a);
    if (b->dropped) {
      c->st.dropped_groups--;
    } else {
      b->unkept = b->nrecs;
      c->st.dropped_records += b->nrecs;
      c->st.ever_dropped_records += b->nrecs;
    }
    a->unkept += b->unkept;
    release_records(c, b);
    b->dropped = 0;
    b->unkept = 0;
  } else if (b->len) {
    uint64_t first;
    memcpy(&first, b->recs, sizeof first);
    a->unsorted |= b->unsorted || (a->nrecs && first < a->last_seq);
    memcpy(a->recs + a->len, b->recs, b->len);
    a->len += b->len;
    a->nrecs += b->nrecs;
    a->last_seq = a->last_seq > b->last_seq ? a->last_seq : b->last_seq;
    c->bytes += b->len; /* b's, given back as it is forgotten */
  }
  for (size_t i = 0; i < b->nobjs; i++) {
    uint64_t v = 0;
    gt_map_get(&c->objs, b->objs[i], &v);
    add_obj(c, ai, b->objs[i], (int)(v & 1));
  }
  b->nobjs = 0; /* its objects are a's now */
  group_forget(c, bi);
}

struct ref {
  uint64_t seq;
  size_t off;
};

static int by_seq(const void *x, const void *y) {
  const struct ref *a = x, *b = y;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Put a merged group's records back in arrival order. */
static void sort_group(struct group *g) {
  struct ref *refs = malloc(g->nrecs * sizeof *refs);
  unsigned char *to = malloc(g->len);
  if (!refs || !to) {
    free(refs), free(to);
    return; /* left unsorted: replayed in merge order */
  }
  size_t n = 0;
  for (size_t off = 0; off < g->len && n < g->nrecs; n++) {
    const struct gt_record *r = (const void *)(g->recs + off + SEQ_BYTES);
    memcpy(&refs[n].seq, g->recs + off, sizeof refs[n].seq);
    refs[n].off = off;
    off += SEQ_BYTES + (size_t)r->nslots * GT_SLOT_SIZE;
  }
  qsort(refs, n, sizeof *refs, by_seq);
  size_t w = 0;
  for (size_t i = 0; i < n; i++) {
    const struct gt_record *r = (const void *)(g->recs + refs[i].off + SEQ_BYTES);
    size_t len = SEQ_BYTES + (size_t)r->nslots * GT_SLOT_SIZE;
    memcpy(to + w, g->recs + refs[i].off, len);
    w += len;
  }
  free(refs);
  free(g->recs);
  g->recs = to;
  g->cap = g->len;
  g->unsorted = 0;
}

/* Append group gi's making to `out`, after its marker. */
static void replay(struct gt_graph_cache *c, uint32_t gi, struct gt_replay_buf *out) {
  struct group *g = &c->groups[gi];
  if (g->dropped || !g->nrecs)
    return;
  if (g->unsorted)
    sort_group(g);
  size_t need = out->len + GT_SLOT_SIZE + g->len;
  if (reserve(&out->data, &out->cap, need) != 0) {
    group_drop(c, g); /* no memory to repeat it: counted as not kept */
    return;
  }
  struct gt_record *m = (void *)(out->data + out->len);
  memset(m, 0, sizeof *m);
  memcpy(&m->ts_ns, g->recs + SEQ_BYTES, sizeof m->ts_ns); /* its first record's */
  m->pid = g->pid;
  m->api = GT_API_gputrace_note;
  m->kind = GT_KIND_NOTE;
  m->nslots = 1;
  m->flags = GT_F_REPLAYED | GT_F_REPLAY_BLOCK;
  m->u.note.last_file = g->file;
  out->len += GT_SLOT_SIZE;
  out->records++;
  for (size_t off = 0; off < g->len;) {
    const struct gt_record *r = (const void *)(g->recs + off + SEQ_BYTES);
    size_t len = (size_t)r->nslots * GT_SLOT_SIZE;
    memcpy(out->data + out->len, r, len);
    out->len += len;
    out->records++;
    off += SEQ_BYTES + len;
  }
  c->st.replayed_groups++;
  c->st.replayed_records += g->nrecs;
}

/* Keep `r` in group gi (flagged as it will be replayed). */
static void keep(struct gt_graph_cache *c, uint32_t gi, const struct gt_record *r) {
  struct group *g = &c->groups[gi];
  size_t len = (size_t)r->nslots * GT_SLOT_SIZE;
  if (!g->dropped && (c->bytes + SEQ_BYTES + len > c->max_bytes ||
                      reserve(&g->recs, &g->cap, g->len + SEQ_BYTES + len) != 0))
    group_drop(c, g);
  if (g->dropped) {
    g->unkept++;
    c->st.dropped_records++;
    c->st.ever_dropped_records++;
    return;
  }
  uint64_t seq = ++c->seq;
  memcpy(g->recs + g->len, &seq, sizeof seq);
  memcpy(g->recs + g->len + SEQ_BYTES, r, len);
  ((struct gt_record *)(void *)(g->recs + g->len + SEQ_BYTES))->flags |= GT_F_REPLAYED;
  g->len += SEQ_BYTES + len;
  g->nrecs++;
  g->last_seq = seq;
  c->bytes += SEQ_BYTES + len;
}

/* The objects `r` ends. */
static void end_objects(struct gt_graph_cache *c, const struct gt_record *r,
                        const struct named *nm) {
  unsigned role = r->kind == GT_KIND_GRAPH && r->api < GT_API_COUNT ? c->role[r->api] : 0;
  for (unsigned i = 0; i < nm->n; i++) {
    unsigned t = nm->type[i];
    int ends = t == OBJ_CAPTURE ? (role & ROLE_ENDS_CAPTURE) != 0
               : r->result != 0 ? 0
               : t == OBJ_GRAPH ? (role & ROLE_ENDS_GRAPH) != 0
                                : (role & ROLE_ENDS_EXEC) != 0;
    uint64_t *v = ends ? gt_map_at(&c->objs, nm->key[i]) : NULL;
    if (!v || (*v & 1))
      continue;
    *v |= 1;
    uint32_t gi = (uint32_t)(*v >> 1);
    if (--c->groups[gi].live == 0) {
      c->st.ended_groups++;
      group_forget(c, gi);
    }
  }
}

/* Keep a record of a graph's making: in the group of what it names (all of
 * them merged), or a new one. */
static void take(struct gt_graph_cache *c, const struct gt_record *r,
                 const struct named *nm, uint32_t file) {
  uint32_t gi = UINT32_MAX;
  int found[MAX_NAMED] = {0};
  for (unsigned i = 0; i < nm->n; i++) {
    uint64_t v;
    if (!gt_map_get(&c->objs, nm->key[i], &v))
      continue;
    found[i] = 1;
    uint32_t g = (uint32_t)(v >> 1);
    if (gi == UINT32_MAX || g == gi) {
      gi = g;
    } else { /* the larger keeps its records in place */
      uint32_t big = c->groups[g].len > c->groups[gi].len ? g : gi;
      merge(c, big, big == g ? gi : g);
      gi = big;
    }
  }
  if (r->result != 0 && gi == UINT32_MAX)
    return; /* a failed call makes nothing */
  if (gi == UINT32_MAX && (gi = group_new(c, r->pid, file)) == UINT32_MAX)
    return; /* no memory: not kept */
  for (unsigned i = 0; i < nm->n; i++) {
    uint64_t *v = found[i] ? gt_map_at(&c->objs, nm->key[i]) : NULL;
    if (v && (*v & 1) && r->result == 0) { /* a handle made again */
      *v &= ~1ull;
      c->groups[gi].live++;
    } else if (!found[i] && r->result == 0) {
      add_obj(c, gi, nm->key[i], 0);
    }
  }
  c->groups[gi].file = file;
  keep(c, gi, r);
  end_objects(c, r, nm);
}

void gt_graph_cache_put(struct gt_graph_cache *c, const struct gt_record *r,
                        uint32_t file, struct gt_replay_buf *out) {
  struct named nm;
  int making = named_by(c, r, &nm);
  for (unsigned i = 0; i < nm.n; i++) { /* what the file lacks comes first */
    uint64_t v;
    if (!gt_map_get(&c->objs, nm.key[i], &v))
      continue;
    uint32_t gi = (uint32_t)(v >> 1);
    if (c->groups[gi].file != file) {
      replay(c, gi, out);
      c->groups[gi].file = file;
    }
  }
  if (making && nm.n)
    take(c, r, &nm, file);
}

void gt_graph_cache_forget(struct gt_graph_cache *c, uint32_t pid) {
  for (size_t i = 0; i < c->ngroups; i++)
    if (c->groups[i].used && c->groups[i].pid == pid)
      group_forget(c, (uint32_t)i);
}

void gt_graph_cache_stats(const struct gt_graph_cache *c,
                          struct gt_graph_cache_stats *st) {
  *st = c->st;
  st->bytes = c->bytes;
}
