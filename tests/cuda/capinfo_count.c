/* capinfo_count.c — preloaded after libgputrace.so: counts the calls of
 * cudaStreamGetCaptureInfo that reach the runtime (the shim asks it, through
 * dlsym(RTLD_NEXT), whether a launch's stream captures: on the general form
 * of a launch hook only, while a capture is open). capture_destroy.cu reads
 * the count with capinfo_queries() (dlsym), before and after a loop of
 * launches (e2e/test_graphs.py, test_destroyed_capture). Forwards each call
 * untouched (the CUDA 13 signature). capinfo_destroy_unseen(stream) is the
 * runtime's cudaStreamDestroy called past the shim (the next definition
 * after this library), as a destroy no hook sees. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

typedef int (*info_fn)(void *, int *, unsigned long long *, void **, const void **,
                       const void **, size_t *);

static unsigned long queries;

unsigned long capinfo_queries(void) {
  return __atomic_load_n(&queries, __ATOMIC_RELAXED);
}

int cudaStreamGetCaptureInfo(void *stream, int *status, unsigned long long *id,
                             void **graph, const void **deps, const void **edges,
                             size_t *ndeps) {
  static info_fn found;
  info_fn next = __atomic_load_n(&found, __ATOMIC_ACQUIRE);
  if (next == NULL) {
    next = (info_fn)dlsym(RTLD_NEXT, "cudaStreamGetCaptureInfo");
    __atomic_store_n(&found, next, __ATOMIC_RELEASE);
  }
  __atomic_fetch_add(&queries, 1, __ATOMIC_RELAXED);
  return next ? next(stream, status, id, graph, deps, edges, ndeps) : 35;
}

int capinfo_destroy_unseen(void *stream) {
  int (*destroy)(void *) = (int (*)(void *))dlsym(RTLD_NEXT, "cudaStreamDestroy");
  return destroy ? destroy(stream) : 35;
}
