/* cupti_attach.c — the stand-in runtime's side of the private CUPTI attach
 * point (standin/cupti/attach.h): cudaGetExportTable, and the reports of
 * API calls and device operations to the one attached client.
 *
 * Contract:
 *  - cudaGetExportTable knows SI_CUPTI_UUID only while the timeline is on
 *    (without it there is no simulated device to report); any other UUID,
 *    as with NVIDIA's runtime for ids it does not publish, is
 *    cudaErrorInvalidValue.
 *  - Without a client every hook is one acquire load and a branch: the
 *    launch path pays nothing else.
 *  - si_cupti_api_enter/leave keep the current call's correlation id in a
 *    thread-local; a nested entry (none today: exported functions do not
 *    call each other) keeps the outer one.
 *  - GPUTRACE_STANDIN_TIMELINE_LOG=FILE: every reported operation is also
 *    written there, one line each, "KIND START END BYTES NODE" (kernel,
 *    memcpy or memset; CLOCK_MONOTONIC ns; NODE the graph node's id, 0
 *    outside graphs): the truth tests compare device times with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti/attach.h"
#include "standin.h"

static const struct si_cupti_client *g_client;
static FILE *g_log;
static int g_log_on;
static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;

__attribute__((constructor)) static void log_open(void) {
  const char *path = getenv("GPUTRACE_STANDIN_TIMELINE_LOG");
  if (path == NULL || *path == '\0')
    return;
  g_log = fopen(path, "w");
  if (g_log == NULL)
    fprintf(stderr, "gputrace standin: cannot write GPUTRACE_STANDIN_TIMELINE_LOG=%s\n",
            path);
  __atomic_store_n(&g_log_on, g_log != NULL, __ATOMIC_RELEASE);
}

static void log_op(const struct si_cupti_op *op) {
  static const char *const kinds[] = {"?", "kernel", "memcpy", "memset"};
  pthread_mutex_lock(&g_log_mu);
  fprintf(g_log, "%s %llu %llu %llu %llu\n", kinds[op->kind <= 3 ? op->kind : 0],
          (unsigned long long)op->start, (unsigned long long)op->end,
          (unsigned long long)op->bytes, (unsigned long long)op->graph_node_id);
  fflush(g_log);
  pthread_mutex_unlock(&g_log_mu);
}
static __thread uint32_t tls_corr;

static int attach(const struct si_cupti_client *c) {
  const struct si_cupti_client *none = NULL;
  return __atomic_compare_exchange_n(&g_client, &none, c, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)
             ? 0
             : -1;
}

static const struct si_cupti_table g_table = {
    .size = sizeof g_table,
    .attach = attach,
    .node_id = si_graph_node_tools_id,
    .graph_id = si_graph_tools_id,
};

SI_API cudaError_t cudaGetExportTable(const void **ppExportTable,
                                      const cudaUUID_t *pExportTableId) {
  if (ppExportTable == NULL || pExportTableId == NULL)
    return si_ret(cudaErrorInvalidValue);
  if (memcmp(pExportTableId->bytes, SI_CUPTI_UUID, 16) != 0 || !si_config()->timeline)
    return si_ret(cudaErrorInvalidValue);
  *ppExportTable = &g_table;
  return cudaSuccess;
}

uint32_t si_cupti_api_enter(const char *api) {
  const struct si_cupti_client *c = __atomic_load_n(&g_client, __ATOMIC_ACQUIRE);
  if (SI_LIKELY(c == NULL) || tls_corr != 0)
    return 0;
  tls_corr = c->api_enter(api);
  return tls_corr;
}

void si_cupti_api_leave(uint32_t *corr) {
  if (SI_LIKELY(*corr == 0))
    return;
  const struct si_cupti_client *c = __atomic_load_n(&g_client, __ATOMIC_ACQUIRE);
  c->api_exit(*corr);
  tls_corr = 0;
}

int si_cupti_on(void) {
  return __atomic_load_n(&g_client, __ATOMIC_ACQUIRE) != NULL ||
         __atomic_load_n(&g_log_on, __ATOMIC_RELAXED);
}

static uint32_t stream_id(const struct si_stream *s) {
  if (s->kind == SI_STREAM_LEGACY)
    return 1;
  if (s->kind == SI_STREAM_PER_THREAD)
    return 2;
  return (uint32_t)((uintptr_t)s >> 4) | 4u; /* stream objects are never freed */
}

void si_cupti_report(struct si_cupti_op *op, const struct si_stream *s) {
  if (SI_UNLIKELY(__atomic_load_n(&g_log_on, __ATOMIC_RELAXED)))
    log_op(op);
  const struct si_cupti_client *c = __atomic_load_n(&g_client, __ATOMIC_ACQUIRE);
  if (SI_LIKELY(c == NULL))
    return;
  op->stream_id = stream_id(s);
  c->op(tls_corr, op);
}

void si_cupti_kernel(const struct si_func *f, dim3 g, dim3 b, size_t shmem,
                     const struct si_stream *s, uint64_t end, uint64_t dur,
                     uint32_t graph_id, uint64_t node_id) {
  struct si_cupti_op op = {.kind = SI_CUPTI_KERNEL,
                           .start = end - dur,
                           .end = end,
                           .name = f ? si_func_name(f) : "",
                           .grid = {(int32_t)g.x, (int32_t)g.y, (int32_t)g.z},
                           .block = {(int32_t)b.x, (int32_t)b.y, (int32_t)b.z},
                           .shmem = (uint32_t)shmem,
                           .graph_id = graph_id,
                           .graph_node_id = node_id};
  si_cupti_report(&op, s);
}

void si_cupti_bytes(unsigned kind, unsigned dir, int pinned, uint64_t bytes,
                    const struct si_stream *s, uint64_t end, uint64_t dur,
                    uint32_t graph_id, uint64_t node_id) {
  struct si_cupti_op op = {.kind = kind,
                           .dir = dir,
                           .pinned = (uint32_t)pinned,
                           .start = end - dur,
                           .end = end,
                           .bytes = bytes,
                           .graph_id = graph_id,
                           .graph_node_id = node_id};
  si_cupti_report(&op, s);
}

unsigned si_cupti_dir(enum cudaMemcpyKind kind, int peer) {
  if (peer)
    return SI_CUPTI_PEER;
  return kind == cudaMemcpyHostToDevice   ? SI_CUPTI_HTOD
         : kind == cudaMemcpyDeviceToHost ? SI_CUPTI_DTOH
                                          : SI_CUPTI_DTOD;
}
