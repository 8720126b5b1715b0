/* pool.c — storage for handle objects (streams, events, graphs).
 *
 * Contract: objects are allocated in chunks and never returned to malloc, so
 * a handle the program keeps after destroying it still points at readable
 * memory whose magic has been cleared: the API answers
 * cudaErrorInvalidResourceHandle instead of reading freed memory. A
 * destroyed object's slot is reused by a later create, as the real runtime
 * reuses handles. Each object starts with a uint32_t magic; the free-list
 * link lives at offset 8, so obj_size must be at least 16.
 */
#include <stdlib.h>
#include <string.h>

#include "standin.h"

#define SI_POOL_CHUNK 64

struct free_node {
  uint32_t magic; /* kept 0 while free */
  void *next;
};

static int grow(struct si_pool *p) {
  if (p->nchunks == p->cap_chunks) {
    size_t cap = p->cap_chunks ? 2 * p->cap_chunks : 8;
    void **c = realloc(p->chunks, cap * sizeof(*c));
    if (c == NULL)
      return -1;
    p->chunks = c;
    p->cap_chunks = cap;
  }
  char *chunk = calloc(SI_POOL_CHUNK, p->obj_size);
  if (chunk == NULL)
    return -1;
  p->chunks[p->nchunks++] = chunk;
  for (size_t i = SI_POOL_CHUNK; i-- > 0;) {
    struct free_node *n = (struct free_node *)(chunk + i * p->obj_size);
    n->next = p->free_list;
    p->free_list = n;
  }
  return 0;
}

void *si_pool_get(struct si_pool *p) {
  pthread_mutex_lock(&p->mu);
  if (p->free_list == NULL && grow(p) != 0) {
    pthread_mutex_unlock(&p->mu);
    return NULL;
  }
  struct free_node *n = p->free_list;
  p->free_list = n->next;
  pthread_mutex_unlock(&p->mu);
  memset(n, 0, p->obj_size);
  return n;
}

void si_pool_put(struct si_pool *p, void *obj) {
  struct free_node *n = obj;
  pthread_mutex_lock(&p->mu);
  __atomic_store_n(&n->magic, 0, __ATOMIC_RELEASE);
  n->next = p->free_list;
  p->free_list = n;
  pthread_mutex_unlock(&p->mu);
}

void si_pool_reset(struct si_pool *p) {
  pthread_mutex_lock(&p->mu);
  p->free_list = NULL;
  for (size_t c = 0; c < p->nchunks; c++) {
    char *chunk = p->chunks[c];
    for (size_t i = SI_POOL_CHUNK; i-- > 0;) {
      struct free_node *n = (struct free_node *)(chunk + i * p->obj_size);
      __atomic_store_n(&n->magic, 0, __ATOMIC_RELEASE);
      n->next = p->free_list;
      p->free_list = n;
    }
  }
  pthread_mutex_unlock(&p->mu);
}
