/* ring.h — lock-free multi-producer / single-consumer ring in shared memory.
 *
 * Contract:
 *  - Layout: struct gt_ring_hdr, then `capacity` 64-bit sequence words, then
 *    `capacity` 96-byte slots. capacity is a power of two. The whole region
 *    is one memfd the traced process creates and hands to the collector.
 *  - Producers (any thread of the traced process) reserve n contiguous slots
 *    with one CAS on `head`, fill them, and commit each slot by moving its
 *    sequence word from pos to pos+1 (a CAS, so a slot the consumer gave up
 *    on is never overwritten by a late commit). No syscall, no allocation,
 *    no lock. When the ring has no room the record is dropped and counted in
 *    dropped[kind]; the producer never waits.
 *  - The consumer (the collector) takes a record once all its slots are
 *    committed, copies it out, and frees the slots by moving their sequence
 *    to pos+capacity. A slot reserved but never committed (its writer died or
 *    stalled past the consumer's patience) is abandoned: the consumer moves
 *    it straight to pos+capacity and counts it in `lost`.
 *  - The consumer keeps its position and loss count in struct gt_ring, never
 *    in shared memory, and never trusts slot contents: a first slot with an invalid
 *    kind or slot count, or text slots out of place, is skipped and counted.
 *    The process can change its slots while the consumer reads them, so the
 *    consumer copies a record out first and validates only its private copy:
 *    a record gt_ring_read hands out is consistent whatever the producer did.
 */
#ifndef GPUTRACE_RING_H
#define GPUTRACE_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "gputrace/schema.h"

#define GT_RING_MAGIC 0x474e495254475047ull /* "GPGTRING" */
#define GT_RING_VERSION 1u
#define GT_RING_MIN_SLOTS 64u

/* Clocks a producer may stamp records with. With GT_CLOCK_TSC, ts_ns and
 * dur_ns hold raw invariant-TSC ticks (an rdtsc costs less than half a
 * clock_gettime) and the collector converts them to CLOCK_MONOTONIC ns
 * before writing the trace, so files always hold nanoseconds. */
#define GT_CLOCK_MONOTONIC 0u
#define GT_CLOCK_TSC 1u

struct gt_ring_hdr {
  uint64_t magic;
  uint32_t version;
  uint32_t slot_size;
  uint64_t capacity; /* slots, a power of two */
  uint64_t total_bytes;
  uint32_t pid;   /* the creator */
  uint32_t clock; /* GT_CLOCK_*: what ts_ns and dur_ns count in this ring */
  _Alignas(64) _Atomic uint64_t head; /* next position producers reserve */
  _Alignas(64) _Atomic uint64_t dropped[GT_KIND_COUNT];
  _Alignas(64) uint64_t consumer_tail; /* a mirror for debugging; the
                                         consumer trusts only its own copy */
  _Atomic uint32_t exited;             /* set by the producer's atexit handler: the
                                          process ended through exit(), not a kill, a
                                          crash, _exit or exec */
};

struct gt_ring {
  struct gt_ring_hdr *hdr;
  _Atomic uint64_t *seq;
  unsigned char *slots;
  uint64_t mask;
  uint64_t tail; /* consumer: next position to read (private) */
  uint64_t lost; /* consumer: slots skipped as invalid or abandoned */
};

/* Bytes a ring of `capacity` slots needs (header, sequence words, slots). */
size_t gt_ring_bytes(uint64_t capacity);

/* Largest power-of-two slot count that fits in `bytes` (0 if too small). */
uint64_t gt_ring_capacity_for(size_t bytes);

/* Format fresh memory of gt_ring_bytes(capacity) bytes. */
void gt_ring_init(void *mem, uint64_t capacity, uint32_t pid, uint32_t clock);

/* Attach to an existing region of `bytes` bytes; validates the header
 * against the size the consumer mapped. Returns 0 or -1 if inconsistent. */
int gt_ring_attach(struct gt_ring *ring, void *mem, size_t bytes);

/* Producer: write one record of rec->nslots slots (text slots follow rec in
 * memory). Returns 1 if written, 0 if dropped for lack of room. */
int gt_ring_write(struct gt_ring *ring, const struct gt_record *rec);

/* Consumer: outcome of one gt_ring_read call. */
enum gt_ring_status {
  GT_RING_EMPTY = 0,   /* nothing reserved past the tail */
  GT_RING_RECORD = 1,  /* a record was copied out */
  GT_RING_PENDING = 2, /* the next slot is reserved but not yet committed */
  GT_RING_SKIPPED = 3  /* GT_RING_MAX_SKIP invalid slots were skipped (and counted
                          in lost) and nothing handed out: call again */
};
#define GT_RING_MAX_SKIP 256u

/* Consumer: copy the next record and its text slots into `out`, which has
 * room for GT_MAX_SLOTS slots. Invalid slots are skipped and added to
 * ring->lost. */
enum gt_ring_status gt_ring_read(struct gt_ring *ring,
                                 struct gt_record out[GT_MAX_SLOTS]);

/* Consumer: give up on the pending slot at the tail (its writer is dead or
 * has stalled too long). Returns the number of slots abandoned. */
uint64_t gt_ring_abandon(struct gt_ring *ring);

/* Slots reserved but not yet consumed. */
uint64_t gt_ring_used(const struct gt_ring *ring);

#endif
