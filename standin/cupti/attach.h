/* attach.h — the private attach point between the stand-in runtime
 * (libcudart.so.13, standin/cupti_attach.c) and the stand-in libcupti
 * (standin/cupti/): how the simulated device's timeline reaches CUPTI
 * activity records without any export the real libraries lack.
 *
 * Contract:
 *  - The stand-in libcupti finds the process's libcudart (already loaded:
 *    it never loads one) and asks cudaGetExportTable for SI_CUPTI_UUID, as
 *    the real libcupti asks the driver for its private tables. A runtime
 *    that does not know the UUID (NVIDIA's, or the stand-in with its
 *    timeline off) answers an error: there is no device, and libcupti then
 *    behaves as the real one without a driver.
 *  - attach() installs one client (the stand-in libcupti) for the rest of
 *    the process; it returns 0, or -1 when another client is installed.
 *  - api_enter/api_exit bracket every runtime entry point that queues
 *    device work, on the calling thread; api_enter returns the call's
 *    correlation id (never 0). op() reports one device operation queued by
 *    the call in progress on this thread (corr 0: none — the runtime's own
 *    work), with its simulated start and end on CLOCK_MONOTONIC. Callbacks
 *    run with no stand-in lock held and never call back into the runtime.
 */
#ifndef GPUTRACE_STANDIN_CUPTI_ATTACH_H
#define GPUTRACE_STANDIN_CUPTI_ATTACH_H

#include <stdint.h>

#define SI_CUPTI_UUID "gputrace-cupti-1" /* 16 bytes, the cudaUUID_t */

enum si_cupti_op_kind { SI_CUPTI_KERNEL = 1, SI_CUPTI_MEMCPY, SI_CUPTI_MEMSET };
enum si_cupti_copy_dir { SI_CUPTI_HTOD = 1, SI_CUPTI_DTOH, SI_CUPTI_DTOD, SI_CUPTI_PEER };

struct si_cupti_op {
  uint32_t kind;       /* enum si_cupti_op_kind */
  uint32_t dir;        /* memcpy: enum si_cupti_copy_dir */
  uint32_t pinned;     /* memcpy: the host side is pinned */
  uint32_t stream_id;  /* the stream's id (1: legacy, 2: per-thread, else unique) */
  uint64_t start, end; /* CLOCK_MONOTONIC ns */
  uint64_t bytes;      /* memcpy, memset */
  const char *name;    /* kernel: the device function's name */
  int32_t grid[3], block[3];
  uint32_t shmem;
  uint32_t graph_id;      /* graph launches: the executable graph's id, else 0 */
  uint64_t graph_node_id; /* graph launches: the node's id, else 0 */
};

struct si_cupti_client {
  uint32_t (*api_enter)(const char *api);
  void (*api_exit)(uint32_t corr);
  void (*op)(uint32_t corr, const struct si_cupti_op *op);
};

struct si_cupti_table {
  uint64_t size; /* sizeof(struct si_cupti_table) */
  int (*attach)(const struct si_cupti_client *client);
  /* The id CUPTI reports for a graph node handle (cuptiGetGraphNodeId),
   * or a graph handle (cuptiGetGraphId): 0 when the handle is invalid. */
  uint64_t (*node_id)(const void *node);
  uint32_t (*graph_id)(const void *graph);
};

#endif
