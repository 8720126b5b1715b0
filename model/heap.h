/* heap.h — the live allocations of every traced process, with where they
 * were made: the session's allocation layer (session.h), which every
 * command that needs allocations reads (leaks, flame, report, dump, chrome).
 *
 * Contract: feed alloc and free records in order (the session does, once
 * per record). A successful free matches the allocation by (pid, pointer):
 * processes, forked children included, have separate heaps. Its memory
 * kind must agree with the API (cudaFree: device or managed; cudaFreeHost /
 * cudaHostUnregister: pinned host), and the API's GT_AF_ARRAY and GT_AF_IPC
 * flags with the allocating API's (cudaFreeArray frees arrays only,
 * cudaIpcCloseMemHandle mappings only), or it is an invalid free — as are
 * frees of unknown pointers (double frees when the pointer was freed
 * before) and frees the runtime refused. An allocation at an address that
 * is still live (its free was not seen) replaces the old block, which is
 * reported. cuMemMap/cuMemUnmap records (GT_F_VMM_MAP) are not memory held:
 * cuMemCreate/cuMemRelease are. IPC mappings (GT_AF_IPC) are blocks like
 * any other — an unclosed one is live at the end — but their bytes are the
 * exporting process's and count in no live or peak total. Live and peak
 * bytes are kept per process and memory kind; a rolling file's carried
 * peaks (HEAP records) raise them to what the files before it reached. Memory is bounded
 * by live blocks plus a fixed window of recently freed pointers (for telling double frees
 * apart). */
#ifndef GPUTRACE_MODEL_HEAP_H
#define GPUTRACE_MODEL_HEAP_H

#include <stdint.h>

#include "gputrace/schema.h"

struct gt_block {
  uint64_t ptr, bytes, ts_ns;
  uint32_t pid, tid, stack_id;
  uint32_t range; /* caller's tag (e.g. the enclosing NVTX range), 0 = none */
  uint16_t api;
  uint8_t memory;
};

enum gt_free_status {
  GT_FREE_OK = 0,
  GT_FREE_UNKNOWN,    /* a pointer never allocated (in the trace) */
  GT_FREE_DOUBLE,     /* a pointer already freed */
  GT_FREE_WRONG_KIND, /* e.g. cudaFree on cudaMallocHost memory */
  GT_FREE_FAILED,     /* the runtime returned an error */
  GT_FREE_NULL,       /* freeing NULL: allowed, not counted */
  GT_FREE_UNTRACKED,  /* cuMemUnmap: a mapping, which holds no memory */
};

struct gt_heap;

struct gt_heap *gt_heap_new(void);
void gt_heap_free(struct gt_heap *h);
/* An allocation record (failed ones are ignored). Returns 1 and *replaced
 * when a live block at the same address was replaced. */
int gt_heap_alloc(struct gt_heap *h, const struct gt_record *r, uint32_t range,
                  struct gt_block *replaced);
/* A free record; *freed gets the matched block when the status is OK or
 * WRONG_KIND / FAILED with a known pointer (then the block stays live). */
enum gt_free_status gt_heap_release(struct gt_heap *h, const struct gt_record *r,
                                    struct gt_block *freed);
void gt_heap_foreach(struct gt_heap *h, void (*fn)(void *ctx, const struct gt_block *b),
                     void *ctx);
uint64_t gt_heap_live_bytes(const struct gt_heap *h, uint32_t pid, unsigned memory);
/* Highest live bytes of a memory kind so far; with GT_MEM_RESIDENT, of
 * device and managed memory together (what occupies the device). */
#define GT_MEM_RESIDENT 4
uint64_t gt_heap_peak_bytes(const struct gt_heap *h, uint32_t pid, unsigned memory);
/* When the device (GT_MEM_DEVICE) or resident (GT_MEM_RESIDENT) peak was
 * reached; 0 for other kinds or none. */
uint64_t gt_heap_peak_ts(const struct gt_heap *h, uint32_t pid, unsigned memory);
/* A HEAP record (GT_F_CARRIED, the start of a rolling file read first):
 * the peaks of the files before it raise the process's peaks. */
void gt_heap_carry(struct gt_heap *h, const struct gt_record *r);
/* A process's peaks as a HEAP record carries them (the collector's). */
void gt_heap_record_peaks(const struct gt_heap *h, uint32_t pid, struct gt_heap_args *a);
/* A process ended: its blocks and figures are dropped (a long-lived
 * collector's heap holds the live processes only). */
void gt_heap_forget(struct gt_heap *h, uint32_t pid);
/* The live block based at ptr in process pid: 1 and *out, or 0. */
int gt_heap_find(const struct gt_heap *h, uint32_t pid, uint64_t ptr,
                 struct gt_block *out);
const char *gt_free_status_name(enum gt_free_status s);

#endif
