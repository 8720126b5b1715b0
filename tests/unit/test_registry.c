/* test_registry.c — preload/registry.c on its own: kernel names (stored
 * privately, emitted when tracing, re-emitted by emit_names, none missed when
 * registration races activation), names of cudaKernel_t handles (once
 * per mapping, re-emitted by emit_names), handle -> stub mapping (remap, NULL, a
 * full table, 8 threads looking up while another maps), and pinned ranges
 * (boundaries, removal, slot reuse, a full table answering "unknown", 8
 * threads adding and removing).
 *
 * The core's record functions are replaced by stubs that capture the
 * KERNEL_NAME records. Build by hand:
 *   gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -pthread -Iinclude \
 *       -Ipreload tests/unit/test_registry.c preload/registry.c -o test_registry
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "check.h"
#include "shim.h"

/* ---- stand-ins for core.c ---- */

struct gt_wiped gt_wiped;
__thread struct gt_tls gt_tls;

int gt_hook_enter_slow(void) {
  return 0;
}
void *gt_resolve(const char *name) {
  (void)name;
  return NULL;
}

#define MAX_NAMES 70000
struct captured {
  uint64_t kernel;
  char text[GT_TEXT_MAX + 1];
};
static struct captured g_names[MAX_NAMES];
static int g_nnames;
static int g_bad_records;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

void gt_record_begin(struct gt_record *rec, unsigned api, uint64_t t0, uint64_t t1,
                     int result) {
  memset(rec, 0, sizeof *rec);
  rec->ts_ns = t0;
  rec->dur_ns = t1 - t0;
  rec->api = (uint16_t)api;
  rec->kind = api == GT_API_gputrace_kernel_name ? GT_KIND_KERNEL_NAME : GT_KIND_NONE;
  rec->nslots = 1;
  rec->result = result;
}

void gt_emit(struct gt_record *rec) {
  (void)rec;
  pthread_mutex_lock(&g_lock);
  g_bad_records++; /* the registry only emits records with text */
  pthread_mutex_unlock(&g_lock);
}

void gt_emit_text(struct gt_record *rec, const char *text, size_t len) {
  pthread_mutex_lock(&g_lock);
  if (rec->kind != GT_KIND_KERNEL_NAME || rec->api != GT_API_gputrace_kernel_name ||
      len > GT_TEXT_MAX || g_nnames >= MAX_NAMES) {
    g_bad_records++;
  } else {
    g_names[g_nnames].kernel = rec->u.kname.kernel;
    memcpy(g_names[g_nnames].text, text, len);
    g_names[g_nnames].text[len] = '\0';
    g_nnames++;
  }
  pthread_mutex_unlock(&g_lock);
}

static void reset_names(void) {
  pthread_mutex_lock(&g_lock);
  g_nnames = 0;
  pthread_mutex_unlock(&g_lock);
}

/* How many captured KERNEL_NAME records say stub -> text. */
static int count_name(const void *stub, const char *text) {
  int n = 0;
  pthread_mutex_lock(&g_lock);
  for (int i = 0; i < g_nnames; i++)
    if (g_names[i].kernel == (uint64_t)(uintptr_t)stub &&
        strcmp(g_names[i].text, text) == 0)
      n++;
  pthread_mutex_unlock(&g_lock);
  return n;
}

/* Stubs and handles are only compared, never called or dereferenced. */
static const void *fake(uintptr_t base, unsigned i) {
  return (const void *)(base + 16u * i);
}

/* ---- kernel names ---- */

static void test_names(void) {
  char name[64];
  strcpy(name, "_Z6kernelPf");
  gt_kernels_register(fake(0x10000, 1), name);
  strcpy(name, "overwritten"); /* the registry keeps its own copy */
  gt_kernels_register(fake(0x10000, 2), "_Z5otherv");
  gt_kernels_register(NULL, "_Z4nullv");       /* ignored */
  gt_kernels_register(fake(0x10000, 3), NULL); /* ignored */
  CHECK_EQ_U64(g_nnames, 0);                   /* not active: nothing yet */

  /* What the core does: the names known, then ACTIVE, then the rest. */
  const void *named = gt_kernels_emit_names(NULL);
  CHECK_EQ_U64(g_nnames, 2);
  CHECK_EQ_U64(count_name(fake(0x10000, 1), "_Z6kernelPf"), 1);
  CHECK_EQ_U64(count_name(fake(0x10000, 2), "_Z5otherv"), 1);
  gt_kernels_register(fake(0x10000, 6), "_Z5sixthv"); /* between: not by itself */
  CHECK_EQ_U64(g_nnames, 2);
  gt_mode_set(GT_MODE_ACTIVE, 1);
  gt_kernels_emit_names(named); /* only the one registered since */
  CHECK_EQ_U64(g_nnames, 3);
  CHECK_EQ_U64(count_name(fake(0x10000, 6), "_Z5sixthv"), 1);

  reset_names();
  gt_kernels_register(fake(0x10000, 4), "_Z5thirdv"); /* active: emitted now */
  CHECK_EQ_U64(g_nnames, 1);
  CHECK_EQ_U64(count_name(fake(0x10000, 4), "_Z5thirdv"), 1);

  /* A forked child re-emits everything. */
  reset_names();
  gt_kernels_emit_names(NULL);
  CHECK_EQ_U64(g_nnames, 4);

  /* Long names are handed over whole (gt_emit_text truncates). */
  char long_name[GT_TEXT_MAX];
  memset(long_name, 'x', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  reset_names();
  gt_kernels_register(fake(0x10000, 5), long_name);
  CHECK_EQ_U64(count_name(fake(0x10000, 5), long_name), 1);
  gt_mode_set(GT_MODE_ACTIVE, 0);
}

/* Registration on one thread while another activates tracing as the core
 * does (names, ACTIVE, names since): every name must be emitted at least
 * once, by register or by one of the two walks. */
#define RACE_NAMES 2000
static atomic_int g_race_go;

static void *race_registrar(void *arg) {
  uintptr_t base = (uintptr_t)arg;
  while (!atomic_load(&g_race_go))
    ;
  char name[32];
  for (unsigned i = 0; i < RACE_NAMES; i++) {
    snprintf(name, sizeof name, "_Zrace%lx_%u", (unsigned long)base, i);
    gt_kernels_register(fake(base, i), name);
  }
  return NULL;
}

static void test_names_race(void) {
  for (unsigned round = 0; round < 8; round++) {
    uintptr_t base = 0x1000000u * (round + 1);
    gt_mode_set(GT_MODE_ACTIVE, 0);
    reset_names();
    atomic_store(&g_race_go, 0);
    pthread_t t;
    pthread_create(&t, NULL, race_registrar, (void *)base);
    atomic_store(&g_race_go, 1);
    for (volatile unsigned spin = 0; spin < round * 20000u; spin++)
      ;
    const void *named = gt_kernels_emit_names(NULL); /* what the core does */
    gt_mode_set(GT_MODE_ACTIVE, 1);
    gt_kernels_emit_names(named);
    pthread_join(t, NULL);
    int missing = 0;
    char name[32];
    for (unsigned i = 0; i < RACE_NAMES; i++) {
      snprintf(name, sizeof name, "_Zrace%lx_%u", (unsigned long)base, i);
      missing += count_name(fake(base, i), name) == 0;
    }
    CHECK_EQ_U64(missing, 0);
  }
  gt_mode_set(GT_MODE_ACTIVE, 0);
}

/* ---- handles ---- */

#define HANDLES 3000u
#define H_BASE 0x7f0000000000u
#define S_BASE 0x400000u

static void test_handles(void) {
  CHECK(gt_kernels_stub_for(NULL) == NULL);
  gt_kernels_map_handle(NULL, fake(S_BASE, 1)); /* ignored */
  CHECK(gt_kernels_stub_for(fake(H_BASE, 0)) == NULL);
  for (unsigned i = 0; i < HANDLES; i++)
    gt_kernels_map_handle(fake(H_BASE, i), fake(S_BASE, i));
  int wrong = 0;
  for (unsigned i = 0; i < HANDLES; i++)
    wrong += gt_kernels_stub_for(fake(H_BASE, i)) != fake(S_BASE, i);
  CHECK_EQ_U64(wrong, 0);
  CHECK(gt_kernels_stub_for(fake(H_BASE, HANDLES)) == NULL);
  CHECK(gt_kernels_stub_for(fake(H_BASE + 8, 0)) == NULL);
  gt_kernels_map_handle(fake(H_BASE, 7), fake(S_BASE, 9999)); /* remap */
  CHECK(gt_kernels_stub_for(fake(H_BASE, 7)) == fake(S_BASE, 9999));
  gt_kernels_map_handle(fake(H_BASE, 7), fake(S_BASE, 7));
}

#define MORE_BASE 0x7e0000000000u
#define MORE 2000u
static atomic_int g_lookups_done;
static atomic_int g_lookup_wrong;

static void *lookup_worker(void *arg) {
  (void)arg;
  int wrong = 0;
  for (unsigned round = 0; round < 200; round++) {
    for (unsigned i = 0; i < HANDLES; i += 7)
      wrong += gt_kernels_stub_for(fake(H_BASE, i)) != fake(S_BASE, i);
    for (unsigned i = 0; i < MORE; i += 5) { /* being mapped: NULL or right */
      const void *s = gt_kernels_stub_for(fake(MORE_BASE, i));
      wrong += s != NULL && s != fake(S_BASE + 0x100000u, i);
    }
  }
  atomic_fetch_add(&g_lookup_wrong, wrong);
  atomic_fetch_add(&g_lookups_done, 1);
  return NULL;
}

static void test_handles_concurrent(void) {
  pthread_t t[8];
  for (int i = 0; i < 8; i++)
    pthread_create(&t[i], NULL, lookup_worker, NULL);
  for (unsigned i = 0; i < MORE; i++)
    gt_kernels_map_handle(fake(MORE_BASE, i), fake(S_BASE + 0x100000u, i));
  for (int i = 0; i < 8; i++)
    pthread_join(t[i], NULL);
  CHECK_EQ_U64(atomic_load(&g_lookups_done), 8);
  CHECK_EQ_U64(atomic_load(&g_lookup_wrong), 0);
  int wrong = 0;
  for (unsigned i = 0; i < MORE; i++)
    wrong += gt_kernels_stub_for(fake(MORE_BASE, i)) != fake(S_BASE + 0x100000u, i);
  CHECK_EQ_U64(wrong, 0);
}

/* Far more handles than slots: some mappings are dropped, none is wrong. */
static void test_handles_full(void) {
  const uintptr_t base = 0x7d0000000000u;
  const unsigned n = 20000;
  for (unsigned i = 0; i < n; i++)
    gt_kernels_map_handle(fake(base, i), fake(S_BASE + 0x200000u, i));
  unsigned found = 0, wrong = 0;
  for (unsigned i = 0; i < n; i++) {
    const void *s = gt_kernels_stub_for(fake(base, i));
    found += s != NULL;
    wrong += s != NULL && s != fake(S_BASE + 0x200000u, i);
  }
  CHECK_EQ_U64(wrong, 0);
  CHECK(found > 1000 && found < n);
  /* earlier mappings survive */
  unsigned old_wrong = 0;
  for (unsigned i = 0; i < HANDLES; i++)
    old_wrong += gt_kernels_stub_for(fake(H_BASE, i)) != fake(S_BASE, i);
  CHECK_EQ_U64(old_wrong, 0);
  CHECK(gt_kernels_stub_for(fake(0x7c0000000000u, 1)) == NULL);
}

/* ---- pinned ranges ---- */

static const void *at(uintptr_t a) {
  return (const void *)a;
}

static void test_pinned_basic(void) {
  CHECK_EQ_U64(gt_pinned_contains(at(0x5000)), 0);
  gt_pinned_add(at(0x10000), 0x100);
  gt_pinned_add(at(0x20000), 0x1000);
  gt_pinned_add(NULL, 0x100);    /* ignored */
  gt_pinned_add(at(0x30000), 0); /* ignored */
  CHECK_EQ_U64(gt_pinned_contains(at(0x10000)), 1);
  CHECK_EQ_U64(gt_pinned_contains(at(0x100ff)), 1);
  CHECK_EQ_U64(gt_pinned_contains(at(0x10100)), 0); /* end is exclusive */
  CHECK_EQ_U64(gt_pinned_contains(at(0x0ffff)), 0);
  CHECK_EQ_U64(gt_pinned_contains(at(0x20800)), 1);
  CHECK_EQ_U64(gt_pinned_contains(at(0x30000)), 0);
  CHECK_EQ_U64(gt_pinned_contains(NULL), 0);
  gt_pinned_remove(at(0x10000));
  CHECK_EQ_U64(gt_pinned_contains(at(0x10000)), 0);
  CHECK_EQ_U64(gt_pinned_contains(at(0x20000)), 1);
  gt_pinned_remove(at(0x20010)); /* not a range start: no effect */
  CHECK_EQ_U64(gt_pinned_contains(at(0x20000)), 1);
  gt_pinned_add(at(0x10000), 0x80); /* reuses the freed slot */
  CHECK_EQ_U64(gt_pinned_contains(at(0x1007f)), 1);
  CHECK_EQ_U64(gt_pinned_contains(at(0x10080)), 0);
  gt_pinned_remove(at(0x10000));
  gt_pinned_remove(at(0x20000));
  CHECK_EQ_U64(gt_pinned_contains(at(0x20000)), 0);
  /* a range at the very top of the address space */
  gt_pinned_add(at(UINTPTR_MAX - 0xfff), 0x1000);
  CHECK_EQ_U64(gt_pinned_contains(at(UINTPTR_MAX - 1)), 1);
  gt_pinned_remove(at(UINTPTR_MAX - 0xfff));
  CHECK_EQ_U64(gt_pinned_contains(at(UINTPTR_MAX - 1)), 0);
}

#define PIN_SLOTS 4096u /* GT_PINNED_SLOTS in registry.c */

static void test_pinned_full(void) {
  const uintptr_t base = 0x100000000u;
  for (unsigned i = 0; i < PIN_SLOTS; i++)
    gt_pinned_add(at(base + 0x10000u * i), 0x1000);
  CHECK_EQ_U64(gt_pinned_contains(at(base + 0x10000u * (PIN_SLOTS - 1) + 0xfff)), 1);
  CHECK_EQ_U64(gt_pinned_contains(at(base + 0x1000)), 0); /* full, none lost yet */
  const uintptr_t extra = base + 0x10000u * PIN_SLOTS;
  gt_pinned_add(at(extra), 0x1000); /* no room: lost */
  CHECK_EQ_U64(gt_pinned_contains(at(extra)), -1);
  CHECK_EQ_U64(gt_pinned_contains(at(base + 0x1000)), -1); /* unknown now */
  CHECK_EQ_U64(gt_pinned_contains(at(base)), 1);           /* known stays known */
  gt_pinned_remove(at(extra)); /* the lost range is gone: known again */
  CHECK_EQ_U64(gt_pinned_contains(at(base + 0x1000)), 0);
  gt_pinned_remove(at(base + 0x10000u * 5));
  gt_pinned_add(at(extra), 0x1000); /* room again */
  CHECK_EQ_U64(gt_pinned_contains(at(extra)), 1);
  CHECK_EQ_U64(gt_pinned_contains(at(base + 0x10000u * 5)), 0);
  gt_pinned_remove(at(extra));
  for (unsigned i = 0; i < PIN_SLOTS; i++)
    gt_pinned_remove(at(base + 0x10000u * i));
  CHECK_EQ_U64(gt_pinned_contains(at(base)), 0);
  CHECK_EQ_U64(gt_pinned_contains(at(extra)), 0);
}

static atomic_int g_pin_wrong;

static void *pinned_worker(void *arg) {
  uintptr_t base = 0x200000000u + 0x100000000u * (uintptr_t)arg;
  int wrong = 0;
  for (unsigned round = 0; round < 2000; round++) {
    for (unsigned i = 0; i < 8; i++)
      gt_pinned_add(at(base + 0x10000u * i), 0x8000);
    for (unsigned i = 0; i < 8; i++) {
      wrong += gt_pinned_contains(at(base + 0x10000u * i + 0x7fff)) != 1;
      wrong += gt_pinned_contains(at(base + 0x10000u * i + 0x8000)) != 0;
    }
    for (unsigned i = 0; i < 8; i++)
      gt_pinned_remove(at(base + 0x10000u * i));
    wrong += gt_pinned_contains(at(base)) != 0;
  }
  atomic_fetch_add(&g_pin_wrong, wrong);
  return NULL;
}

static void test_pinned_concurrent(void) {
  pthread_t t[8];
  for (uintptr_t i = 0; i < 8; i++)
    pthread_create(&t[i], NULL, pinned_worker, (void *)i);
  for (int i = 0; i < 8; i++)
    pthread_join(t[i], NULL);
  CHECK_EQ_U64(atomic_load(&g_pin_wrong), 0);
}

/* Launches record cudaKernel_t handles as they are: mapping one writes
 * KERNEL_NAME(handle, its stub's name) once (again only when remapped),
 * and emit_names writes the handles' names after the stubs'. */
static void test_handle_names(void) {
  gt_mode_set(GT_MODE_ACTIVE, 1);
  gt_kernels_register(fake(0x20000, 1), "_Z6namedv");
  reset_names();
  gt_kernels_map_handle(fake(0x30000, 1), fake(0x20000, 1));
  CHECK_EQ_U64(count_name(fake(0x30000, 1), "_Z6namedv"), 1);
  gt_kernels_map_handle(fake(0x30000, 1), fake(0x20000, 1)); /* the same: no record */
  CHECK_EQ_U64(g_nnames, 1);
  gt_kernels_map_handle(fake(0x30000, 2), fake(0x20000, 99)); /* no name known */
  CHECK_EQ_U64(g_nnames, 1);
  reset_names();
  gt_kernels_emit_names(NULL);
  CHECK_EQ_U64(count_name(fake(0x30000, 1), "_Z6namedv"), 1);
  CHECK_EQ_U64(count_name(fake(0x20000, 1), "_Z6namedv"), 1);
  reset_names();
}

int main(void) {
  test_names();
  test_names_race();
  test_handle_names();
  test_handles();
  test_handles_concurrent();
  test_handles_full();
  test_pinned_basic();
  test_pinned_full();
  test_pinned_concurrent();
  CHECK_EQ_U64(g_bad_records, 0);
  return check_finish("test_registry");
}
