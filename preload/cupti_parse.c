/* cupti_parse.c — CUPTI activity buffers and what becomes of them: the
 * buffer pool, the join of device records to timed calls, DEVICE records
 * and the count of every timed call whose device record never came.
 *
 * Contract:
 *  - Buffers: CU_NBUF buffers of CU_BUF_BYTES, each its own allocation,
 *    made once at start; a request (CUPTI's thread or any application
 *    thread: CUDA 13 keeps a buffer per thread) takes a free one with one
 *    atomic operation and never allocates or locks; none free: CUPTI gets
 *    none and drops records (its count is read at each parse). A completed
 *    buffer is only marked delivered; parsing happens on the resolver
 *    thread (gt_cu_parse). A buffer of ours that another client's callback
 *    received is that client's: our pool is one smaller.
 *  - Join: external-correlation records (our kind, CUSTOM2) of every
 *    delivered buffer are read before any device record, into a
 *    direct-mapped table correlationId -> external id; a device record
 *    whose correlation or call metadata is not known yet waits (at most
 *    CU_WAIT_MAX records, CU_AGE_NS) and is retried at each parse; one
 *    whose correlation never maps to our kind was an untimed call's and is
 *    dropped unreported.
 *  - A joined record becomes a DEVICE record (source CUPTI) on the host
 *    clock (our timestamp callback returns CLOCK_MONOTONIC: cupti.c) if its
 *    times are valid: neither 0 ("not collected": a forced flush's
 *    incomplete records), end >= start, start no earlier than the call,
 *    end not in the future. An invalid one is counted as a dropped DEVICE
 *    record and written nowhere.
 *  - Every timed call is counted exactly once: matched (a DEVICE record
 *    written, or its activity invalid and counted), or lost (counted as a
 *    dropped DEVICE record) when nothing came CU_AGE_NS after its commit
 *    (all at exit), or when its metadata slot was reused first.
 *  - Metadata slots are read with a seqlock: id (acquire), the fields, an
 *    acquire fence, id again.
 *  - A graph launch's records share its call: each is written, with the
 *    launch's metadata and the node's graphNodeId (the model names nodes
 *    by it).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cupti_int.h"
#include "devtime_int.h"

#define CU_NBUF 128u
#define CU_BUF_BYTES (128u << 10)
#define CU_CORR_SLOTS (1u << 17)
#define CU_WAIT_MAX 65536u
#define CU_RECORD_AGE_NS 2000000000ull /* a waiting record's age limit */

struct cu_corr {
  uint32_t correlation_id;
  uint64_t external_id;
};
/* A device record, what the shim reads of it. */
struct cu_act {
  uint32_t kind, correlation_id, device_id, copy_kind;
  uint64_t start, end, bytes, node;
  uint64_t arrived_ns;
};

static uint8_t *g_bufs[CU_NBUF];
static _Atomic uint64_t g_free[CU_NBUF / 64];      /* bit set: free */
static _Atomic uint64_t g_delivered[CU_NBUF / 64]; /* bit set: parse it */
static _Atomic size_t g_valid[CU_NBUF];
static struct cu_corr *g_corr;
static struct cu_act *g_wait; /* records waiting for their join */
static unsigned g_nwait;
static uint64_t g_scan_id = 1; /* the oldest call not yet matched or lost */
static _Atomic uint64_t g_matched, g_lost;
static uint64_t g_cupti_dropped; /* CUPTI's own count: records it could not store */

static const struct act_layout g_layouts[] = {
#define X(k, sz, st, en, dev, str, corr, by, ck, nd, gr)                                 \
  {k, sz, st, en, dev, str, corr, by, ck, nd, gr},
    ACT_LAYOUTS(X)
#undef X
};

int gt_cu_buffers_init(void) {
  g_corr = calloc(CU_CORR_SLOTS, sizeof *g_corr);
  g_wait = calloc(CU_WAIT_MAX, sizeof *g_wait);
  if (g_corr == NULL || g_wait == NULL)
    return -1;
  for (unsigned i = 0; i < CU_NBUF; i++) {
    g_bufs[i] = aligned_alloc(8, CU_BUF_BYTES); /* pages touched as CUPTI fills them */
    if (g_bufs[i] == NULL)
      return -1;
  }
  for (unsigned w = 0; w < CU_NBUF / 64; w++)
    atomic_store(&g_free[w], ~0ull);
  return 0;
}

/* ---- CUPTI's callbacks: no lock, no allocation ---- */

void gt_cu_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  *buffer = NULL;
  *size = 0;
  *max_records = 0;
  for (unsigned w = 0; w < CU_NBUF / 64; w++) {
    uint64_t f = atomic_load_explicit(&g_free[w], memory_order_acquire);
    while (f != 0) {
      uint64_t bit = f & -f;
      if (atomic_compare_exchange_weak_explicit(
              &g_free[w], &f, f & ~bit, memory_order_acq_rel, memory_order_acquire)) {
        *buffer = g_bufs[w * 64 + (unsigned)__builtin_ctzll(bit)];
        *size = CU_BUF_BYTES;
        return;
      }
    }
  }
}

void gt_cu_buffer_completed(void *ctx, uint32_t stream, uint8_t *buffer, size_t size,
                            size_t valid) {
  (void)ctx, (void)stream, (void)size;
  for (unsigned i = 0; i < CU_NBUF; i++)
    if (g_bufs[i] == buffer) {
      atomic_store_explicit(&g_valid[i], valid, memory_order_relaxed);
      atomic_fetch_or_explicit(&g_delivered[i / 64], 1ull << (i % 64),
                               memory_order_release);
      return;
    }
}

/* ---- metadata ---- */

/* A consistent copy of the slot of external id `ext`: 1, or 0 when the
 * slot holds another call (not committed yet, or reused). */
static int meta_read(uint64_t ext, struct cu_meta *out, struct cu_meta **slot) {
  struct cu_meta *m = &g_cu_meta[ext % CU_META_SLOTS];
  *slot = m;
  if (atomic_load_explicit(&m->id, memory_order_acquire) != ext)
    return 0;
  memcpy(out, m, sizeof *out); /* the atomics too: overwritten below */
  atomic_thread_fence(memory_order_acquire);
  return atomic_load_explicit(&m->id, memory_order_relaxed) == ext;
}

void gt_cu_meta_overwritten(struct cu_meta *m) {
  uint32_t waiting = CU_WAITING;
  if (atomic_compare_exchange_strong(&m->state, &waiting, CU_LOST)) {
    atomic_fetch_add(&g_lost, 1);
    gt_count_dropped(GT_KIND_DEVICE, 1);
  }
}

/* ---- records ---- */

static const struct act_layout *layout_of(uint32_t kind) {
  for (size_t i = 0; i < sizeof g_layouts / sizeof *g_layouts; i++)
    if (g_layouts[i].kind == kind)
      return &g_layouts[i];
  return NULL;
}

static uint64_t field(const uint8_t *r, uint16_t off, size_t n) {
  uint64_t v = 0;
  if (off != ACT_NONE)
    memcpy(&v, r + off, n); /* little-endian: the low n bytes */
  return v;
}

static uint8_t gt_dir_of(uint32_t copy_kind) {
  switch (copy_kind) {
  case COPY_KIND_HTOD:
    return GT_DIR_HTOD;
  case COPY_KIND_DTOH:
    return GT_DIR_DTOH;
  case COPY_KIND_HTOH:
    return GT_DIR_HTOH;
  case COPY_KIND_PTOP:
    return GT_DIR_PEER;
  default:
    return GT_DIR_DTOD;
  }
}

static void emit(const struct cu_act *a, const struct cu_meta *m) {
  struct gt_record rec;
  gt_dt_device_begin(&rec, (uint32_t)getpid(), m->tid, m->api, m->flags, a->start,
                     a->end - a->start, GT_DEVTIME_CUPTI, m->sample);
  rec.u.device.stream = m->stream;
  rec.u.device.kernel = m->kernel;
  rec.u.device.bytes = a->bytes;
  rec.u.device.corr = m->corr;
  rec.u.device.of_kind = a->kind == KIND_MEMCPY || a->kind == KIND_MEMCPY2
                             ? GT_KIND_MEMCPY
                         : a->kind == KIND_MEMSET ? GT_KIND_MEMSET
                                                  : GT_KIND_LAUNCH;
  rec.u.device.dir = rec.u.device.of_kind == GT_KIND_MEMCPY ? gt_dir_of(a->copy_kind) : 0;
  rec.u.device.device = (int32_t)a->device_id;
  rec.u.device.node = (uint32_t)a->node;
  gt_emit_device(&rec);
}

static int times_valid(const struct cu_act *a, const struct cu_meta *m, uint64_t now) {
  return a->start != 0 && a->end != 0 && a->end >= a->start &&
         a->start + 1000 >= m->call_ns && a->end <= now + 1000000000ull;
}

/* 1 when done with the record (written, counted or not ours), 0 to wait. */
static int join(const struct cu_act *a, uint64_t now) {
  const struct cu_corr *c = &g_corr[a->correlation_id % CU_CORR_SLOTS];
  if (c->correlation_id != a->correlation_id || c->external_id == 0)
    return now - a->arrived_ns > CU_RECORD_AGE_NS; /* an untimed call's, or not yet */
  uint64_t ext = c->external_id;
  struct cu_meta copy, *slot;
  if (!meta_read(ext, &copy, &slot)) /* not committed yet, or reused (counted) */
    return atomic_load(&slot->id) > ext || now - a->arrived_ns > CU_RECORD_AGE_NS;
  uint32_t st = atomic_load(&slot->state);
  if (st == CU_LOST)
    return 1; /* came after it was counted lost */
  if (st == CU_WAITING && atomic_compare_exchange_strong(&slot->state, &st, CU_MATCHED))
    atomic_fetch_add(&g_matched, 1);
  if (times_valid(a, &copy, now))
    emit(a, &copy);
  else
    gt_count_dropped(GT_KIND_DEVICE, 1); /* 0/0, reversed or off the clock */
  return 1;
}

static void read_extcorr(const uint8_t *r) {
  struct act_extcorr e;
  memcpy(&e, r, sizeof e);
  if (e.external_kind == EXT_KIND_CUSTOM2)
    g_corr[e.correlation_id % CU_CORR_SLOTS] =
        (struct cu_corr){e.correlation_id, e.external_id};
}

static void read_device(const uint8_t *r, uint32_t kind, uint64_t now) {
  const struct act_layout *l = layout_of(kind);
  if (l == NULL)
    return;
  struct cu_act a = {
      .kind = kind,
      .correlation_id = (uint32_t)field(r, l->corr, 4),
      .device_id = (uint32_t)field(r, l->device, 4),
      .copy_kind = (uint32_t)field(r, l->copy_kind, 1),
      .start = field(r, l->start, 8),
      .end = field(r, l->end, 8),
      .bytes = field(r, l->bytes, 8),
      .node = field(r, l->node, 8),
      .arrived_ns = now,
  };
  if (!join(&a, now) && g_nwait < CU_WAIT_MAX)
    g_wait[g_nwait++] = a; /* beyond: its call ages out as lost, counted */
}

/* Both passes over buffer i: 0 external correlation, 1 device records. */
static void parse_buffer(unsigned i, int pass, uint64_t now) {
  uint8_t *b = g_bufs[i];
  size_t valid = atomic_load_explicit(&g_valid[i], memory_order_relaxed);
  void *r = NULL;
  while (gt_cu.next_record(b, valid, &r) == CUPTI_OK) {
    uint32_t kind;
    memcpy(&kind, r, sizeof kind);
    if (pass == 0 && kind == KIND_EXTERNAL_CORRELATION)
      read_extcorr(r);
    else if (pass == 1 && kind != KIND_EXTERNAL_CORRELATION)
      read_device(r, kind, now);
  }
}

/* Calls committed before `before` with nothing matched: lost. A call still
 * running stops the scan (its commit comes), except at the last parse. */
static void age_calls(uint64_t before, int last) {
  uint64_t next = atomic_load(&g_cu_next_id);
  for (; g_scan_id < next; g_scan_id++) {
    struct cu_meta *m = &g_cu_meta[g_scan_id % CU_META_SLOTS];
    uint64_t id = atomic_load_explicit(&m->id, memory_order_acquire);
    if (id == 0 && atomic_load(&m->state) == CU_WAITING && !last)
      break; /* taken, its call still running: wait for its commit */
    if (id != g_scan_id)
      continue; /* failed, or reused (counted then) */
    if (m->commit_ns > before)
      break;
    gt_cu_meta_overwritten(m); /* WAITING -> LOST, counted */
  }
}

void gt_cu_parse(uint64_t age_ns, int last) {
  uint64_t now = gt_mono_ns();
  uint64_t ready[CU_NBUF / 64];
  for (unsigned w = 0; w < CU_NBUF / 64; w++)
    ready[w] = atomic_exchange_explicit(&g_delivered[w], 0, memory_order_acquire);
  for (int pass = 0; pass < 2; pass++)
    for (unsigned i = 0; i < CU_NBUF; i++)
      if (ready[i / 64] & (1ull << (i % 64)))
        parse_buffer(i, pass, now);
  for (unsigned w = 0; w < CU_NBUF / 64; w++)
    atomic_fetch_or_explicit(&g_free[w], ready[w], memory_order_release);
  unsigned kept = 0;
  for (unsigned i = 0; i < g_nwait; i++)
    if (!join(&g_wait[i], now))
      g_wait[kept++] = g_wait[i];
  g_nwait = kept;
  size_t dropped = 0;
  if (gt_cu.dropped && gt_cu.dropped(NULL, 0, &dropped) == CUPTI_OK)
    g_cupti_dropped += dropped;
  age_calls(age_ns == 0 ? UINT64_MAX : now - age_ns, last);
}

uint64_t gt_cu_matched(void) {
  return atomic_load(&g_matched);
}

uint64_t gt_cu_lost(void) {
  return atomic_load(&g_lost);
}

uint64_t gt_cu_cupti_dropped(void) {
  return g_cupti_dropped;
}

void gt_cu_parse_forget(void) {
  g_nwait = 0;
}
