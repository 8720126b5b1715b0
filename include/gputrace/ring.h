/* ring.h — a traced process's records in shared memory: per-thread
 * single-producer sub-rings over a pool of blocks, and one shared
 * multi-producer ring, in one memfd.
 *
 * Contract:
 *  - Region (GT_RING_VERSION 3; gt_ring_layout computes it from the size
 *    alone, so both sides agree without trusting the header): struct
 *    gt_ring_hdr | the shared ring (`shared_cap` 64-bit sequence words, then
 *    `shared_cap` 64-byte slots) | a directory of `nsub` struct gt_sub, each
 *    on its own cache lines | each sub-ring's block list (`nblocks` 32-bit
 *    block numbers) | the free-block bitmap | `nblocks` blocks of
 *    `block_slots` 64-byte slots.
 *  - A sub-ring is a stream of slots (positions from 0) laid in blocks: the
 *    k-th block of the stream is list[k % nblocks]. Its writer takes the
 *    lowest free block from the bitmap (a CAS) when the current one is
 *    full (a small working set: common/ring.c take_block), so one
 *    storming thread can use nearly the whole region and eight storming
 *    threads share it, while an idle thread holds one block at most. The
 *    collector returns a block to the bitmap once it has read it.
 *  - Records are framed: a first 8-byte word (gt_frame_word: format, slot
 *    count, api, tid), then the payload. GT_FRAME_LAUNCH is one slot, the
 *    compact launch (struct gt_frame_launch), written in place by the hook.
 *    GT_FRAME_FULL carries a struct gt_record and its 96-byte text slots
 *    (nslots of them) after the frame word, over ceil((8 + 96 n) / 64)
 *    slots. A frame never straddles blocks: the rest of a block too short
 *    for the next frame is a GT_FRAME_PAD frame. In the shared ring frames
 *    may wrap around its end.
 *  - Sub-rings (struct gt_ring_producer): a thread claims a FREE one by CAS
 *    at its first record and is its only writer until it retires it (thread
 *    exit). It keeps its head private and commits by one release store of
 *    head: no locked instruction, syscall or allocation but one CAS per
 *    block. No free block: the record is dropped and counted in
 *    dropped[kind] (an atomic add, only on that path). The header's layout
 *    is fixed (static asserts below): dropped[] has GT_RING_DROP_SLOTS
 *    counters whatever GT_KIND_COUNT is, so a new record kind does not move
 *    the header; what a process's ring means is still tied to its shim's
 *    kinds and APIs, which the hello carries (protocol.h, the contract). A thread that
 * finds no free sub-ring writes to the shared ring for the rest of its life (so its
 * records stay in order).
 *  - The shared ring is Vyukov's bounded queue with per-slot sequence words:
 *    producers reserve a frame's slots with one CAS on `head` and commit each
 *    slot by moving its sequence word from pos to pos+1 (a CAS, so a slot the
 *    consumer gave up on is never overwritten by a late commit). A slot
 *    reserved but never committed (its writer died or stalled past the
 *    consumer's patience) is abandoned: gt_ring_abandon counts it in `lost`.
 *  - The consumer (the collector) drains the sources round-robin, up to
 *    GT_RING_BATCH records from one before the next; it re-reads a head only
 *    once it has reached the one it read before, and publishes a sub-ring's
 *    tail per batch (gt_ring_publish). It frees RETIRED sub-rings it has
 *    emptied (state FREE) for the next thread. It keeps its positions in
 *    struct gt_ring and never trusts shared memory: the process can change
 *    any byte at any time, so a frame is copied out first and only the
 *    private copy is validated and converted to struct gt_record (+ text
 *    slots). Invalid frames, block numbers and heads are skipped and
 *    counted in `lost`; work per call is bounded (GT_RING_MAX_SKIP).
 *  - SIGKILL loses nothing committed: a record is in shared memory once its
 *    head (or sequence word) is stored.
 */
#ifndef GPUTRACE_RING_H
#define GPUTRACE_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "gputrace/schema.h"

#define GT_RING_MAGIC 0x474e495254475047ull /* "GPGTRING" */
#define GT_RING_VERSION 3u    /* 3: dropped[] of GT_RING_DROP_SLOTS, fixed offsets */
#define GT_RING_MIN_SLOTS 64u /* the shared ring's least capacity */
#define GT_RSLOT 64u          /* bytes per ring slot */
#define GT_RING_NSUB_MAX 64u
#define GT_RING_BLOCK_MAX 512u /* slots per block (32 KiB), less in small regions */
#define GT_RING_BLOCK_MIN 32u  /* room for the largest frame */
#define GT_RING_BATCH 512u
#define GT_RING_MAX_SKIP 256u
/* Drop counters in the header: room for kinds to come, so adding one
 * leaves the shared layout as it is. */
#define GT_RING_DROP_SLOTS 64u
_Static_assert(GT_KIND_COUNT <= GT_RING_DROP_SLOTS, "a drop counter for every kind");

/* Clocks a producer may stamp records with. With GT_CLOCK_TSC, times hold
 * raw invariant-TSC ticks (an rdtsc is cheaper than a clock_gettime:
 * docs/PERFORMANCE.md, "Figures moved out of code comments") and the
 * collector converts them to CLOCK_MONOTONIC ns before writing the trace,
 * so files always hold nanoseconds. */
#define GT_CLOCK_MONOTONIC 0u
#define GT_CLOCK_TSC 1u

/* Frame formats (the low byte of a frame's first word). */
#define GT_FRAME_LAUNCH 0xC1u
#define GT_FRAME_FULL 0xC2u
#define GT_FRAME_PAD 0xC3u /* the rest of a block: skip it */
#define GT_FRAME_MAX_SLOTS ((8u + GT_MAX_SLOTS * GT_SLOT_SIZE + GT_RSLOT - 1u) / GT_RSLOT)

static inline uint64_t gt_frame_word(unsigned format, unsigned nslots, unsigned api,
                                     uint32_t tid) {
  return (uint64_t)format | (uint64_t)nslots << 8 | (uint64_t)api << 16 |
         (uint64_t)tid << 32;
}

/* Ring slots a full frame of a record of `nslots` 96-byte slots takes. */
static inline unsigned gt_frame_slots(unsigned nslots) {
  return (8u + nslots * GT_SLOT_SIZE + GT_RSLOT - 1u) / GT_RSLOT;
}

/* The compact launch: everything a kernel launch record needs, in one
 * cache line. pid comes from the connection; kind and flags from the API
 * (apis.h: GT_AF_HOST_FN, GT_AF_GRAPH; __cudaLaunchKernel passes a
 * cudaKernel_t). A launch whose values do not fit (dur >= 2^32 ticks, grid
 * y/z or block dims >= 2^16, shared memory >= 4 GiB, a result outside
 * 0..65535) is written as a full frame instead. */
struct gt_frame_launch {
  uint64_t frame; /* gt_frame_word(GT_FRAME_LAUNCH, 1, api, tid) */
  uint64_t ts;
  uint32_t dur;
  uint32_t corr;
  uint64_t kernel;
  uint64_t stream;
  uint32_t grid_x;
  uint16_t grid_y, grid_z;
  uint16_t block_x, block_y, block_z;
  uint16_t result;
  uint32_t shared_mem;
  uint32_t stack_id;
};
_Static_assert(sizeof(struct gt_frame_launch) == GT_RSLOT, "a launch is one slot");
/* In a compact launch's stack_id: GT_F_STACK_SAMPLED (stack ids stay far
 * below 2^31: the shim's intern table is bounded). */
#define GT_FRAME_STACK_SAMPLED 0x80000000u

/* The record flags a launch's API implies (what a compact launch leaves
 * out): host functions, graphs, and __cudaLaunchKernel's cudaKernel_t. */
static inline uint32_t gt_launch_flags(unsigned api) {
  unsigned af = gt_api_flags(api);
  return (af & GT_AF_HOST_FN ? GT_F_HOST_FN : 0u) | (af & GT_AF_GRAPH ? GT_F_GRAPH : 0u) |
         (api == GT_API___cudaLaunchKernel || api == GT_API___cudaLaunchKernel_ptsz
              ? GT_F_KERNEL_HANDLE
              : 0u);
}

enum gt_sub_state { GT_SUB_FREE = 0, GT_SUB_OWNED = 1, GT_SUB_RETIRED = 2 };

/* head alone on the line the producer stores to for every record; the
 * rest on a line the consumer reads when a sub-ring is empty, without
 * taking the head's line from the producer's core. */
struct gt_sub {
  _Alignas(64) _Atomic uint64_t head; /* producer: slots committed */
  _Alignas(64) _Atomic uint64_t tail; /* consumer: published per batch */
  _Atomic uint32_t state;             /* enum gt_sub_state */
  uint32_t owner;                     /* tid, for debugging */
};

struct gt_ring_hdr {
  uint64_t magic;
  uint32_t version;
  uint32_t slot_size; /* GT_RSLOT */
  uint64_t total_bytes;
  uint32_t pid;   /* the creator */
  uint32_t clock; /* GT_CLOCK_*: what times count in this ring */
  uint32_t nsub;
  uint32_t block_slots;
  uint64_t shared_cap, nblocks;       /* gt_ring_layout */
  _Alignas(64) _Atomic uint64_t head; /* the shared ring's next reservation */
  _Alignas(64) _Atomic uint64_t dropped[GT_RING_DROP_SLOTS]; /* by kind */
  _Alignas(64) uint64_t consumer_tail; /* a mirror for debugging; the
                                         consumer trusts only its own copy */
  _Atomic uint32_t exited;             /* set by the producer's atexit handler and
                                          its _exit: the process ended through exit()
                                          or _exit(), not a kill, a crash or exec */
};
/* The shared layout of version 3: a change here is a new GT_RING_VERSION. */
_Static_assert(offsetof(struct gt_ring_hdr, version) == 8, "ring header layout");
_Static_assert(offsetof(struct gt_ring_hdr, shared_cap) == 40, "ring header layout");
_Static_assert(offsetof(struct gt_ring_hdr, nblocks) == 48, "ring header layout");
_Static_assert(offsetof(struct gt_ring_hdr, head) == 64, "ring header layout");
_Static_assert(offsetof(struct gt_ring_hdr, dropped) == 128, "ring header layout");
_Static_assert(offsetof(struct gt_ring_hdr, consumer_tail) == 640, "ring header layout");
_Static_assert(offsetof(struct gt_ring_hdr, exited) == 648, "ring header layout");
_Static_assert(sizeof(struct gt_ring_hdr) == 704, "ring header layout");

struct gt_ring_layout {
  uint64_t shared_cap, nblocks;
  unsigned nsub, block_slots;
  size_t seq_off, shared_off, dir_off, list_off, map_off, block_off, bytes;
};

/* Consumer state of one sub-ring (private to the collector). */
struct gt_ring_src {
  uint64_t tail;       /* next position to read */
  uint64_t published;  /* the tail last stored in shared memory */
  uint64_t seen;       /* the head last read: re-read only once reached, so
                          the line the producer commits to is not pulled
                          across cores for every record */
  uint64_t epoch;      /* the pass in which the head was last read */
  unsigned char *base; /* the block holding tail; NULL at a block's start */
  uint32_t block;      /* its number */
};

struct gt_ring {
  struct gt_ring_hdr *hdr;
  _Atomic uint64_t *seq; /* the shared ring */
  unsigned char *slots;
  uint64_t mask;
  uint64_t tail;      /* consumer: the shared ring's next position (private) */
  uint64_t lost;      /* consumer: slots skipped as invalid or abandoned */
  uint64_t scribbled; /* consumer: heads past what any writer reaches (the
                         process wrote on its ring), skipped */
  unsigned nsub;
  struct gt_sub *dir;
  uint32_t *lists;           /* nsub lists of nblocks block numbers */
  _Atomic uint64_t *freemap; /* bit set: block free */
  unsigned char *blocks;
  uint64_t nblocks;
  unsigned block_slots, block_shift;
  struct gt_ring_src src[GT_RING_NSUB_MAX];
  uint64_t epoch;      /* consumer passes (gt_ring_publish ends one) */
  int eager;           /* re-read heads at will (else once per pass): set by
                          gt_ring_attach; the collector clears it while the
                          process runs, so a consumer faster than the writer
                          does not pull the head's line for every record */
  unsigned cur;        /* round-robin: nsub is the shared ring */
  unsigned batch_left; /* records left in the current source's batch */
  unsigned last_src;   /* where the last record gt_ring_read gave came from */
};

/* A thread's sub-ring (its own, in thread-local storage). next == end (no
 * room) sends every write to the slow path (gt_ring_producer_room: the
 * next block). An end, not a count of slots left: the launch path tests
 * it against the next it loads anyway, and a commit moves one field. */
struct gt_ring_producer {
  unsigned char *next; /* where the next slot goes */
  unsigned char *end;  /* the end of the current block */
  uint64_t head;       /* private; published by gt_ring_commit_slot */
  uint64_t tid;        /* shifted into frame words: (uint64_t)tid << 32 */
  struct gt_sub *sub;
  struct gt_ring *ring;
  uint32_t *list;
  int state; /* GT_PROD_* */
};
enum { GT_PROD_NONE = 0, GT_PROD_SUB = 1, GT_PROD_SHARED = 2, GT_PROD_RETIRED = 3 };

/* Layout for a region of `bytes`; 0, or -1 when it is too small. */
int gt_ring_layout(size_t bytes, struct gt_ring_layout *l);
/* Bytes a ring made for `bytes` uses (<= bytes), 0 if too small. */
size_t gt_ring_bytes_for(size_t bytes);
/* Format fresh (zeroed or not) memory of gt_ring_bytes_for(bytes) bytes. */
void gt_ring_init(void *mem, size_t bytes, uint32_t pid, uint32_t clock);
/* Attach to an existing region of `bytes` bytes; validates the header
 * against the layout of its declared size and the size mapped. 0 or -1. */
int gt_ring_attach(struct gt_ring *ring, void *mem, size_t bytes);

/* ---- producers ---- */

/* Write one record of rec->nslots 96-byte slots (text slots follow rec in
 * memory) to the shared ring as a full frame. 1 if written, 0 if dropped
 * (counted). */
int gt_ring_write(struct gt_ring *ring, const struct gt_record *rec);

/* Claim a free sub-ring for the calling thread: 0, or -1 (none free: the
 * producer is marked GT_PROD_SHARED). */
int gt_ring_claim(struct gt_ring *ring, struct gt_ring_producer *p, uint32_t tid);
/* Thread exit: hand the sub-ring back (the consumer drains, then frees it);
 * later writes by this thread go to the shared ring. */
void gt_ring_retire(struct gt_ring_producer *p);
/* Slow path: 1 when `n` contiguous slots are free at `next`: the rest of
 * the block is padded and a free block taken when needed. 0: no free block
 * (or no sub-ring). */
int gt_ring_producer_room(struct gt_ring_producer *p, unsigned n);
/* Write a full frame to the producer's sub-ring. 1 written, 0 no room
 * (not counted: the caller counts or falls back). */
int gt_ring_producer_write(struct gt_ring_producer *p, const struct gt_record *rec);

static inline struct gt_frame_launch *gt_ring_slot(const struct gt_ring_producer *p) {
  return (struct gt_frame_launch *)(void *)p->next;
}

/* Slots left in the producer's current block. */
static inline uint64_t gt_ring_room(const struct gt_ring_producer *p) {
  return (uint64_t)(p->end - p->next) / GT_RSLOT;
}

/* Commit the one slot at gt_ring_slot (room was checked), which the caller
 * may hold as `slot` (saves reloading p->next after stores through it). */
static inline void gt_ring_commit_slot(struct gt_ring_producer *p, void *slot) {
  p->next = (unsigned char *)slot + GT_RSLOT;
  /* Ask for the line 16 records ahead now, for writing: it is usually a
   * line of a block the collector read and freed, cached but shared with
   * its core, and a plain prefetch (GCC's prefetcht0 without -mprfchw)
   * would leave the store to take it over. Intel CPUs before Broadwell,
   * which lack PREFETCHW, run it as a NOP. */
#if defined(__x86_64__)
  __asm__("prefetchw %0" : : "m"(*(p->next + 16u * GT_RSLOT)));
#else
  __builtin_prefetch(p->next + 16u * GT_RSLOT, 1, 3);
#endif
  atomic_store_explicit(&p->sub->head, ++p->head, memory_order_release);
}

static inline void gt_ring_commit1(struct gt_ring_producer *p) {
  gt_ring_commit_slot(p, p->next);
}

/* Count a record that had no room. */
void gt_ring_count_drop(struct gt_ring *ring, unsigned kind);

/* ---- the consumer ---- */

enum gt_ring_status {
  GT_RING_EMPTY = 0,   /* nothing committed in any source */
  GT_RING_RECORD = 1,  /* a record was copied out */
  GT_RING_PENDING = 2, /* only the shared ring has work: a reserved,
                          uncommitted slot at its tail */
  GT_RING_SKIPPED = 3  /* GT_RING_MAX_SKIP invalid slots were skipped (and
                          counted in lost) and nothing handed out: call again */
};

/* Copy the next record, converted to struct gt_record and its text slots,
 * into `out` (room for GT_MAX_SLOTS slots). pid is left 0 for compact
 * launches: the caller knows its process. */
enum gt_ring_status gt_ring_read(struct gt_ring *ring,
                                 struct gt_record out[GT_MAX_SLOTS]);
/* The next record of source `src` alone (nsub: the shared ring), as
 * gt_ring_read; an invalid frame gives GT_RING_SKIPPED (counted). For a
 * consumer that must look ahead in the other sources (collector: a launch
 * whose kernel's name another thread wrote). */
enum gt_ring_status gt_ring_read_source(struct gt_ring *ring, unsigned src,
                                        struct gt_record out[GT_MAX_SLOTS]);
/* End of a pass: store the sub-rings' tails the consumer has passed. */
void gt_ring_publish(struct gt_ring *ring);
/* Give up on the pending slot at the shared ring's tail (its writer is dead
 * or has stalled too long). Returns the number of slots abandoned. */
uint64_t gt_ring_abandon(struct gt_ring *ring);
/* How full the region is, in percent: the sub-rings' backlog against the
 * pool of blocks, or the shared ring if fuller (heads are untrusted:
 * clamped). */
unsigned gt_ring_fill_pct(const struct gt_ring *ring);

#endif
