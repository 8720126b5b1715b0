/* nvtx.c — see nvtx.h. */
#include "nvtx.h"

#include <stdlib.h>
#include <string.h>

#include "gputrace/map.h"
#include "util.h"

#define INLINE_NAME 40 /* most range names fit: no allocation per push */

struct open_range {
  uint64_t start_ns, domain, tag;
  uint32_t pid, tid;
  char *long_name; /* NULL when the name fits in `name` */
  char name[INLINE_NAME];
};

struct thread { /* push ranges open on one thread, all domains */
  struct open_range *items;
  size_t len, cap;
};

struct gt_nvtx {
  struct gt_map thread_index; /* (pid, tid) -> index in threads */
  uint64_t last_key;          /* the thread of the last record, + 1 */
  size_t last;
  struct thread *threads;
  size_t nthreads, cap_threads;
  struct gt_map started;    /* (pid, range id) -> struct open_range * */
  struct open_range closed; /* the last completed range: its name lives on */
  gt_range_open_fn hook;
  void *hook_ctx;
};

struct gt_nvtx *gt_nvtx_new(void) {
  return gt_xcalloc(1, sizeof(struct gt_nvtx));
}

static const char *name_of(const struct open_range *o) {
  return o->long_name ? o->long_name : o->name;
}

static void set_name(struct open_range *o, const char *text) {
  size_t n = strlen(text);
  o->long_name = NULL;
  if (n < INLINE_NAME) {
    memcpy(o->name, text, n + 1);
  } else if (!(o->long_name = strdup(text))) {
    gt_oom();
  }
}

void gt_nvtx_free(struct gt_nvtx *n) {
  if (!n)
    return;
  for (size_t i = 0; i < n->nthreads; i++) {
    for (size_t j = 0; j < n->threads[i].len; j++)
      free(n->threads[i].items[j].long_name);
    free(n->threads[i].items);
  }
  free(n->threads);
  gt_map_free(&n->thread_index);
  for (size_t i = 0; i < n->started.cap; i++)
    if (n->started.used[i] == 1) {
      struct open_range *o = (void *)(uintptr_t)n->started.vals[i];
      free(o->long_name);
      free(o);
    }
  gt_map_free(&n->started);
  free(n->closed.long_name);
  free(n);
}

void gt_nvtx_set_open_hook(struct gt_nvtx *n, gt_range_open_fn hook, void *ctx) {
  n->hook = hook;
  n->hook_ctx = ctx;
}

/* Ranges come in runs on one thread: the last one is kept before the map. */
static struct thread *thread_of(struct gt_nvtx *n, uint32_t pid, uint32_t tid) {
  uint64_t key = gt_pid_key(pid, tid);
  if (n->last_key != key + 1) {
    int added;
    n->threads = gt_find_or_add(&n->thread_index, key, n->threads, &n->nthreads,
                                &n->cap_threads, sizeof *n->threads, &n->last, &added);
    n->last_key = key + 1;
  }
  return &n->threads[n->last];
}

static struct open_range opened(struct gt_nvtx *n, const struct gt_record *r,
                                const char *text) {
  struct open_range o = {.start_ns = r->ts_ns,
                         .domain = r->u.nvtx.domain,
                         .tag = n->hook ? n->hook(n->hook_ctx, r) : 0,
                         .pid = r->pid,
                         .tid = r->tid};
  set_name(&o, text);
  return o;
}

/* o completed at `end`: report it; its name stays valid until the next. */
static void complete(struct gt_nvtx *n, const struct open_range *o, uint64_t end,
                     int depth, struct gt_range *out) {
  free(n->closed.long_name);
  n->closed = *o;
  *out = (struct gt_range){.pid = o->pid,
                           .tid = o->tid,
                           .start_ns = o->start_ns,
                           .end_ns = end,
                           .depth = depth,
                           .domain = o->domain,
                           .name = name_of(&n->closed),
                           .tag = o->tag};
}

static struct thread *find_thread(const struct gt_nvtx *n, uint32_t pid, uint32_t tid) {
  uint64_t idx;
  if (!n->nthreads || !gt_map_get(&n->thread_index, gt_pid_key(pid, tid), &idx))
    return NULL;
  return &n->threads[idx];
}

static int pop(struct gt_nvtx *n, const struct gt_record *r, struct gt_range *out) {
  struct thread *t = thread_of(n, r->pid, r->tid);
  size_t i = t->len;
  while (i > 0 && t->items[i - 1].domain != r->u.nvtx.domain)
    i--;
  if (i == 0)
    return 0; /* a pop without a push we saw (tracing started inside it) */
  int depth = 0;
  for (size_t j = 0; j + 1 < i; j++)
    depth += t->items[j].domain == r->u.nvtx.domain;
  struct open_range o = t->items[i - 1];
  memmove(&t->items[i - 1], &t->items[i], (t->len - i) * sizeof o);
  t->len--;
  complete(n, &o, r->ts_ns, depth, out);
  return 1;
}

int gt_nvtx_feed(struct gt_nvtx *n, const struct gt_record *r, const char *text,
                 struct gt_range *out) {
  switch (r->u.nvtx.op) {
  case GT_NVTX_PUSH: {
    struct thread *t = thread_of(n, r->pid, r->tid);
    t->items = gt_grow(t->items, &t->cap, t->len + 1, sizeof *t->items);
    t->items[t->len] = opened(n, r, text);
    t->len++;
    return 0;
  }
  case GT_NVTX_POP:
    return pop(n, r, out);
  case GT_NVTX_START: {
    struct open_range *o = gt_xcalloc(1, sizeof *o);
    *o = opened(n, r, text);
    uint64_t key = gt_pid_key(r->pid, r->u.nvtx.range_id), old;
    if (gt_map_get(&n->started, key, &old)) { /* a range id reused while open */
      free(((struct open_range *)(uintptr_t)old)->long_name);
      free((void *)(uintptr_t)old);
    }
    gt_map_put(&n->started, key, (uint64_t)(uintptr_t)o);
    return 0;
  }
  case GT_NVTX_END: {
    uint64_t key = gt_pid_key(r->pid, r->u.nvtx.range_id), v;
    if (!gt_map_get(&n->started, key, &v))
      return 0;
    gt_map_del(&n->started, key);
    struct open_range *o = (void *)(uintptr_t)v;
    complete(n, o, r->ts_ns, -1, out);
    free(o);
    return 1;
  }
  }
  return 0;
}

unsigned gt_nvtx_depth(const struct gt_nvtx *n, uint32_t pid, uint32_t tid) {
  const struct thread *t = find_thread(n, pid, tid);
  return t ? (unsigned)t->len : 0;
}

uint64_t gt_nvtx_outer_tag(const struct gt_nvtx *n, uint32_t pid, uint32_t tid) {
  const struct thread *t = find_thread(n, pid, tid);
  return t && t->len ? t->items[0].tag : 0;
}

static void report_open(const struct open_range *o, int depth,
                        void (*fn)(void *ctx, const struct gt_range *r), void *ctx) {
  struct gt_range r = {.pid = o->pid,
                       .tid = o->tid,
                       .start_ns = o->start_ns,
                       .end_ns = 0,
                       .depth = depth,
                       .domain = o->domain,
                       .name = name_of(o),
                       .tag = o->tag};
  fn(ctx, &r);
}

void gt_nvtx_open_ranges(const struct gt_nvtx *n,
                         void (*fn)(void *ctx, const struct gt_range *r), void *ctx) {
  for (size_t i = 0; i < n->nthreads; i++) {
    const struct thread *t = &n->threads[i];
    for (size_t j = 0; j < t->len; j++) {
      int depth = 0;
      for (size_t k = 0; k < j; k++)
        depth += t->items[k].domain == t->items[j].domain;
      report_open(&t->items[j], depth, fn, ctx);
    }
  }
  for (size_t i = 0; i < n->started.cap; i++)
    if (n->started.used[i] == 1)
      report_open((void *)(uintptr_t)n->started.vals[i], -1, fn, ctx);
}
