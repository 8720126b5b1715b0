/* heap.c — see heap.h.
 *
 * One map from (pid, pointer) holds both the live blocks (their index) and
 * the recently freed pointers (FREED | the number of frees before theirs),
 * so that an allocation or a free is one lookup: a pointer freed and
 * allocated again is the same entry. A freed pointer is remembered for the
 * FREED_WINDOW frees after its own (older ones are told apart by their
 * number at once, and swept out of the map every FREED_WINDOW frees, which
 * bounds it). */
#include "heap.h"

#include <stdlib.h>
#include <string.h>

#include "gputrace/map.h"
#include "util.h"

#define FREED_WINDOW 65536 /* recently freed pointers remembered */
#define FREED (1ull << 63) /* a map value: freed, FREED | frees before it */

struct proc_live {
  uint32_t pid;
  uint64_t live[4];
  uint64_t peak[5];    /* per memory kind, and GT_MEM_RESIDENT */
  uint64_t peak_ts[2]; /* when the device and the resident peaks were reached */
};

struct gt_heap {
  struct gt_block *blocks;
  size_t nblocks, cap;
  uint64_t *free_list; /* indexes of unused entries */
  size_t nfree, free_cap;
  struct gt_map index; /* (pid, ptr) -> block index, or FREED | its free's number */
  uint64_t frees;      /* successful frees so far */
  struct gt_map procs; /* pid -> index in live */
  struct proc_live *live;
  size_t nlive, live_cap;
  uint32_t last_pid; /* proc_of's last answer, without a lookup */
  size_t last_live;  /* its index + 1; 0: none */
};

struct gt_heap *gt_heap_new(void) {
  return gt_xcalloc(1, sizeof(struct gt_heap));
}

void gt_heap_free(struct gt_heap *h) {
  if (!h)
    return;
  free(h->blocks);
  free(h->free_list);
  free(h->live);
  gt_map_free(&h->index);
  gt_map_free(&h->procs);
  free(h);
}

static struct proc_live *proc_of(struct gt_heap *h, uint32_t pid) {
  if (h->last_live && h->last_pid == pid)
    return &h->live[h->last_live - 1];
  size_t i;
  int added;
  h->live = gt_find_or_add(&h->procs, pid, h->live, &h->nlive, &h->live_cap,
                           sizeof *h->live, &i, &added);
  h->live[i].pid = pid;
  h->last_pid = pid;
  h->last_live = i + 1;
  return &h->live[i];
}

uint64_t gt_heap_live_bytes(const struct gt_heap *h, uint32_t pid, unsigned memory) {
  if (h->last_live && h->last_pid == pid) /* proc_of's last answer */
    return memory < 4 ? h->live[h->last_live - 1].live[memory] : 0;
  uint64_t i;
  return memory < 4 && gt_map_get(&h->procs, pid, &i) ? h->live[i].live[memory] : 0;
}

uint64_t gt_heap_peak_bytes(const struct gt_heap *h, uint32_t pid, unsigned memory) {
  uint64_t i;
  return memory <= GT_MEM_RESIDENT && gt_map_get(&h->procs, pid, &i)
             ? h->live[i].peak[memory]
             : 0;
}

static void raise_peaks(struct proc_live *p, unsigned memory, uint64_t ts) {
  if (p->live[memory] > p->peak[memory]) {
    p->peak[memory] = p->live[memory];
    if (memory == GT_MEM_DEVICE)
      p->peak_ts[0] = ts;
  }
  uint64_t resident = p->live[GT_MEM_DEVICE] + p->live[GT_MEM_MANAGED];
  if (resident > p->peak[GT_MEM_RESIDENT]) {
    p->peak[GT_MEM_RESIDENT] = resident;
    p->peak_ts[1] = ts;
  }
}

uint64_t gt_heap_peak_ts(const struct gt_heap *h, uint32_t pid, unsigned memory) {
  uint64_t i;
  if (!gt_map_get(&h->procs, pid, &i))
    return 0;
  return memory == GT_MEM_DEVICE     ? h->live[i].peak_ts[0]
         : memory == GT_MEM_RESIDENT ? h->live[i].peak_ts[1]
                                     : 0;
}

void gt_heap_carry(struct gt_heap *h, const struct gt_record *r) {
  struct proc_live *p = proc_of(h, r->pid);
  const struct gt_heap_args *a = &r->u.heap;
  for (unsigned m = 0; m <= GT_MEM_RESIDENT; m++)
    if (a->peak[m] > p->peak[m]) {
      p->peak[m] = a->peak[m];
      if (m == GT_MEM_DEVICE || m == GT_MEM_RESIDENT)
        p->peak_ts[m == GT_MEM_RESIDENT] = a->peak_ts_ns[m == GT_MEM_RESIDENT];
    }
}

void gt_heap_record_peaks(const struct gt_heap *h, uint32_t pid, struct gt_heap_args *a) {
  uint64_t i;
  memset(a, 0, sizeof *a);
  if (!gt_map_get(&h->procs, pid, &i))
    return;
  memcpy(a->peak, h->live[i].peak, sizeof a->peak);
  memcpy(a->peak_ts_ns, h->live[i].peak_ts, sizeof a->peak_ts_ns);
}

void gt_heap_forget(struct gt_heap *h, uint32_t pid) {
  for (size_t i = 0; i < h->index.cap; i++) {
    if (h->index.used[i] != 1 || (h->index.vals[i] & FREED))
      continue;
    uint64_t idx = h->index.vals[i];
    if (h->blocks[idx].pid != pid)
      continue;
    gt_map_del(&h->index, h->index.keys[i]); /* a tombstone: the scan goes on */
    h->free_list =
        gt_grow(h->free_list, &h->free_cap, h->nfree + 1, sizeof *h->free_list);
    h->free_list[h->nfree++] = idx;
  }
  uint64_t i;
  if (gt_map_get(&h->procs, pid, &i))
    memset(h->live[i].live, 0, sizeof h->live[i].live),
        memset(h->live[i].peak, 0, sizeof h->live[i].peak);
}

/* A freed entry's value: still within the window? */
static int remembered(const struct gt_heap *h, uint64_t val) {
  return h->frees - (val & ~FREED) <= FREED_WINDOW;
}

/* The entry at *val is freed now; every FREED_WINDOW frees, the entries
 * freed before the window are dropped. */
static void remember_freed(struct gt_heap *h, uint64_t *val) {
  *val = FREED | h->frees++;
  if (h->frees % FREED_WINDOW)
    return;
  for (size_t i = 0; i < h->index.cap; i++)
    if (h->index.used[i] == 1 && (h->index.vals[i] & FREED) &&
        !remembered(h, h->index.vals[i]))
      gt_map_del(&h->index, h->index.keys[i]); /* a tombstone: the scan goes on */
}

/* An IPC mapping is another process's memory: tracked, not counted live. */
static uint64_t counted_bytes(unsigned api, uint64_t bytes) {
  return gt_api_flags(api) & GT_AF_IPC ? 0 : bytes;
}

int gt_heap_alloc(struct gt_heap *h, const struct gt_record *r, uint32_t range,
                  struct gt_block *replaced) {
  if (r->result != 0 || r->u.mem.ptr == 0 || (r->flags & GT_F_VMM_MAP))
    return 0;
  uint64_t key = gt_pid_key(r->pid, r->u.mem.ptr), idx;
  struct proc_live *p = proc_of(h, r->pid);
  uint64_t *live = p->live, *val = gt_map_at(&h->index, key);
  int reused = val && !(*val & FREED);
  if (reused) { /* reused without a free we saw */
    idx = *val;
    *replaced = h->blocks[idx];
    live[h->blocks[idx].memory & 3] -=
        counted_bytes(h->blocks[idx].api, h->blocks[idx].bytes);
  } else if (h->nfree) {
    idx = h->free_list[--h->nfree];
  } else {
    h->blocks = gt_grow(h->blocks, &h->cap, h->nblocks + 1, sizeof *h->blocks);
    idx = h->nblocks++;
  }
  h->blocks[idx] = (struct gt_block){.ptr = r->u.mem.ptr,
                                     .bytes = r->u.mem.bytes,
                                     .ts_ns = r->ts_ns,
                                     .pid = r->pid,
                                     .tid = r->tid,
                                     .stack_id = r->stack_id,
                                     .range = range,
                                     .api = r->api,
                                     .memory = r->u.mem.memory & 3};
  if (val)
    *val = idx; /* live again, or still: the same entry */
  else
    gt_map_put(&h->index, key, idx);
  live[r->u.mem.memory & 3] += counted_bytes(r->api, r->u.mem.bytes);
  raise_peaks(p, r->u.mem.memory & 3, r->ts_ns);
  return reused;
}

/* Can this API free this block? Arrays are freed by the array frees and IPC
 * mappings closed by the IPC closes only, and those free nothing else. */
static int kind_matches(unsigned api, const struct gt_block *b) {
  const unsigned family = GT_AF_ARRAY | GT_AF_IPC;
  unsigned fl = gt_api_flags(api);
  if ((fl & family) != (gt_api_flags(b->api) & family))
    return 0;
  if (fl & GT_AF_PINNED)
    return b->memory == GT_MEM_PINNED_HOST;
  return b->memory == GT_MEM_DEVICE || b->memory == GT_MEM_MANAGED;
}

enum gt_free_status gt_heap_release(struct gt_heap *h, const struct gt_record *r,
                                    struct gt_block *freed) {
  if (r->flags & GT_F_VMM_MAP)
    return GT_FREE_UNTRACKED;
  if (r->u.mem.ptr == 0)
    return r->result == 0 ? GT_FREE_NULL : GT_FREE_FAILED;
  uint64_t key = gt_pid_key(r->pid, r->u.mem.ptr), *val = gt_map_at(&h->index, key);
  if (!val)
    return r->result != 0 ? GT_FREE_FAILED : GT_FREE_UNKNOWN;
  if ((*val & FREED) && remembered(h, *val))
    return GT_FREE_DOUBLE; /* whether or not the runtime caught it */
  if (*val & FREED)
    return r->result != 0 ? GT_FREE_FAILED : GT_FREE_UNKNOWN;
  uint64_t idx = *val;
  *freed = h->blocks[idx];
  if (!kind_matches(r->api, freed))
    return GT_FREE_WRONG_KIND;
  if (r->result != 0)
    return GT_FREE_FAILED;
  proc_of(h, r->pid)->live[freed->memory] -= counted_bytes(freed->api, freed->bytes);
  h->free_list = gt_grow(h->free_list, &h->free_cap, h->nfree + 1, sizeof *h->free_list);
  h->free_list[h->nfree++] = idx;
  remember_freed(h, val);
  return GT_FREE_OK;
}

int gt_heap_find(const struct gt_heap *h, uint32_t pid, uint64_t ptr,
                 struct gt_block *out) {
  uint64_t idx;
  if (!gt_map_get(&h->index, gt_pid_key(pid, ptr), &idx) || (idx & FREED))
    return 0;
  *out = h->blocks[idx];
  return 1;
}

void gt_heap_foreach(struct gt_heap *h, void (*fn)(void *ctx, const struct gt_block *b),
                     void *ctx) {
  for (size_t i = 0; i < h->index.cap; i++)
    if (h->index.used[i] == 1 && !(h->index.vals[i] & FREED))
      fn(ctx, &h->blocks[h->index.vals[i]]);
}

const char *gt_free_status_name(enum gt_free_status s) {
  static const char *const names[] = {
      "ok",   "unknown pointer", "double free", "wrong memory kind", "failed",
      "null", "untracked"};
  return (unsigned)s < 7 ? names[s] : "?";
}
