/* prom_kernels.c — GPU time by kernel for /metrics (prom_series.h).
 *
 * Each kernel's device time (DEVICE records of launches, weighted by the
 * launches each stands for: prom_kernels_device) adds up under the
 * demangled name its process gave it
 * (KERNEL_NAME), whichever process ran it. PROM_KERNEL_MAX names have a
 * label: the first ones seen while there is room, then, at each publish,
 * the top ones by GPU time (a name outside them takes the label of the
 * lowest labeled name not among them once it has 10 % more time). A
 * labeled name shows its whole time (a label new to it starts there: rate()
 * counts from its second sample); PROM_OTHER counts the time of names
 * while they had no label and of kernels without a name, so every series
 * only grows, and a label that moves on simply ends.
 * A DEVICE record timed 1 in N stands for N launches of its kernel, but
 * never for more than its process made and no record stood for yet: every
 * kernel's first launch is timed, under its thread's N (hundreds in a
 * launch storm), and a kernel launched once must count once. So a named
 * kernel's entry keeps the launches owed (LAUNCH +1, DEVICE -weight), and
 * a record weighs its sample clamped to [1, owed]: launches it skipped
 * that were not read yet go to the kernel's next record.
 * Cost: a map probe per launch and per DEVICE record; ranking (a sort of
 * the names) at publish, only once there are more names than labels.
 * Memory: PROM_KERNEL_NAMES names at most (later ones count as PROM_OTHER)
 * and one map entry per (live process, kernel handle). */
#include <stdlib.h>
#include <string.h>

#include "gputrace/map.h"
#include "gputrace/trace_file.h"
#include "prom_series.h"
#include "util.h"

#define PROM_KERNEL_NAMES 4096

struct kname {
  char name[PROM_NAME_MAX];
  double ns;
  int slot; /* its label in prom_work.kern, -1: none */
};

struct prom_kernels {
  struct kname *names;
  size_t nnames, cnames;
  struct gt_map by_hash; /* hash of the name -> index + 1 */
  struct gt_map handles; /* (pid, stub) -> entry(): index + 1, launches owed */
  uint64_t *keys;        /* the keys of `handles`, and their pids, for process ends */
  uint32_t *key_pids;
  size_t nkeys, ckeys;
  struct rank {
    double ns;
    unsigned i;
  } * order; /* ranking's scratch */
};

struct prom_kernels *prom_kernels_new(void) {
  struct prom_kernels *k = calloc(1, sizeof *k);
  if (!k)
    return NULL;
  gt_map_init(&k->by_hash);
  gt_map_init(&k->handles);
  return k;
}

void prom_kernels_free(struct prom_kernels *k) {
  if (!k)
    return;
  gt_map_free(&k->by_hash);
  gt_map_free(&k->handles);
  free(k->names);
  free(k->keys);
  free(k->key_pids);
  free(k->order);
  free(k);
}

/* The index of a name, added (with a label while there is room); -1 past
 * PROM_KERNEL_NAMES. A name's index is at or after the one its hash maps
 * to (the first name with that hash). */
static long name_index(struct prom_kernels *k, struct prom_work *w, const char *name) {
  uint64_t h = prom_name_hash(name), v;
  if (gt_map_get(&k->by_hash, h, &v)) { /* the first with this hash, or (rarely) later */
    for (size_t i = v - 1; i < k->nnames; i++)
      if (!strncmp(k->names[i].name, name, PROM_NAME_MAX - 1))
        return (long)i;
  }
  if (k->nnames == PROM_KERNEL_NAMES)
    return -1;
  if (k->nnames == k->cnames) {
    size_t c = k->cnames ? 2 * k->cnames : 64;
    struct kname *n = realloc(k->names, c * sizeof *n);
    if (!n)
      return -1;
    k->names = n, k->cnames = c;
  }
  struct kname *n = &k->names[k->nnames];
  prom_set_name(n->name, name);
  n->ns = 0;
  n->slot = w->nkern < PROM_KERNEL_MAX ? (int)w->nkern++ : -1;
  if (n->slot >= 0)
    prom_set_name(w->kern[n->slot].name, name), w->kern[n->slot].gpu_ns = 0;
  if (!gt_map_get(&k->by_hash, h, &v))
    gt_map_put(&k->by_hash, h, k->nnames + 1);
  return (long)k->nnames++;
}

/* A `handles` value: the name's index + 1 (low half) and the launches no
 * DEVICE record stood for yet (high half, signed and saturating: a DEVICE
 * record read before its launch leaves it below 0 for a while). */
static uint64_t entry(uint32_t index1, int64_t owed) {
  owed = owed < INT32_MIN ? INT32_MIN : owed > INT32_MAX ? INT32_MAX : owed;
  return (uint64_t)index1 | (uint64_t)(uint32_t)(int32_t)owed << 32;
}
static uint32_t index1_of(uint64_t v) {
  return (uint32_t)v;
}
static int64_t owed_of(uint64_t v) {
  return (int32_t)(uint32_t)(v >> 32);
}

static void remember_key(struct prom_kernels *k, uint64_t key, uint32_t pid) {
  if (k->nkeys == k->ckeys) {
    size_t c = k->ckeys ? 2 * k->ckeys : 64;
    uint64_t *keys = realloc(k->keys, c * sizeof *keys);
    if (keys)
      k->keys = keys;
    uint32_t *pids = realloc(k->key_pids, c * sizeof *pids);
    if (pids)
      k->key_pids = pids;
    if (!keys || !pids)
      return; /* kept in the map: forgotten only at stop */
    k->ckeys = c;
  }
  k->keys[k->nkeys] = key;
  k->key_pids[k->nkeys++] = pid;
}

void prom_kernels_named(struct prom_kernels *k, struct prom_work *w,
                        const struct gt_record *r) {
  char text[GT_TEXT_MAX + 1];
  gt_record_text(r, r->u.kname.text_len, text, sizeof text);
  char *name = gt_demangle(text);
  if (!name)
    return;
  long i = name_index(k, w, name);
  free(name);
  uint64_t key = gt_pid_key(r->pid, r->u.kname.kernel), old = 0;
  int known = gt_map_get(&k->handles, key, &old);
  if (i < 0 && known)
    gt_map_del(&k->handles, key); /* renamed past the bound: other */
  else if (i >= 0 &&
           gt_map_put(&k->handles, key, entry((uint32_t)i + 1, owed_of(old))) == 0 &&
           !known)
    remember_key(k, key, r->pid);
}

void prom_kernels_ended(struct prom_kernels *k, uint32_t pid) {
  size_t j = 0;
  for (size_t i = 0; i < k->nkeys; i++) {
    if (k->key_pids[i] == pid) {
      gt_map_del(&k->handles, k->keys[i]);
      continue;
    }
    k->keys[j] = k->keys[i];
    k->key_pids[j++] = k->key_pids[i];
  }
  k->nkeys = j;
}

void prom_kernels_launched(struct prom_kernels *k, const struct gt_record *r) {
  uint64_t *v = gt_map_at(&k->handles, gt_pid_key(r->pid, r->u.launch.kernel));
  if (v)
    *v = entry(index1_of(*v), owed_of(*v) + 1);
}

double prom_kernels_device(struct prom_kernels *k, struct prom_work *w,
                           const struct gt_record *r) {
  uint32_t weight = r->u.device.sample ? r->u.device.sample : 1;
  uint64_t *v = gt_map_at(&k->handles, gt_pid_key(r->pid, r->u.device.kernel));
  struct kname *n = NULL;
  if (v) { /* named: no more launches than were made and not stood for */
    int64_t owed = owed_of(*v);
    weight = owed < 1 ? 1 : owed < weight ? (uint32_t)owed : weight;
    *v = entry(index1_of(*v), owed - weight);
    n = &k->names[index1_of(*v) - 1];
  } /* else no count of its launches: as it was timed */
  double ns = (double)r->dur_ns * weight;
  if (n)
    n->ns += ns;
  if (n && n->slot >= 0)
    w->kern[n->slot].gpu_ns = n->ns;
  else
    w->kern[PROM_KERNEL_MAX].gpu_ns += ns;
  return ns;
}

static int by_time(const void *a, const void *b) {
  double x = ((const struct rank *)a)->ns, y = ((const struct rank *)b)->ns;
  return x < y ? 1 : x > y ? -1 : 0;
}

void prom_kernels_rank(struct prom_kernels *k, struct prom_work *w) {
  if (!k || k->nnames <= PROM_KERNEL_MAX)
    return; /* every name has its label */
  struct rank *o = realloc(k->order, k->nnames * sizeof *o);
  if (!o)
    return;
  k->order = o;
  for (size_t i = 0; i < k->nnames; i++)
    o[i] = (struct rank){k->names[i].ns, (unsigned)i};
  qsort(o, k->nnames, sizeof *o, by_time);
  /* o[0..MAX) the top; labeled names below it give way, lowest first */
  size_t give = k->nnames;
  for (size_t t = 0; t < PROM_KERNEL_MAX; t++) {
    struct kname *up = &k->names[o[t].i];
    if (up->slot >= 0)
      continue;
    while (give > PROM_KERNEL_MAX && k->names[o[give - 1].i].slot < 0)
      give--;
    if (give == PROM_KERNEL_MAX)
      return;
    struct kname *down = &k->names[o[--give].i];
    if (up->ns <= 1.1 * down->ns)
      return; /* the rest are lower still */
    up->slot = down->slot, down->slot = -1;
    prom_set_name(w->kern[up->slot].name, up->name);
    w->kern[up->slot].gpu_ns = up->ns;
  }
}
