/* map.c — see include/gputrace/map.h. */
#include "gputrace/map.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return k;
}

void gt_map_init(struct gt_map *m) {
  memset(m, 0, sizeof *m);
}

void gt_map_free(struct gt_map *m) {
  free(m->keys);
  free(m->vals);
  free(m->used);
  memset(m, 0, sizeof *m);
}

static int rehash(struct gt_map *m, size_t cap) {
  struct gt_map n = {.cap = cap};
  n.keys = malloc(cap * sizeof *n.keys);
  n.vals = malloc(cap * sizeof *n.vals);
  n.used = calloc(cap, 1);
  if (!n.keys || !n.vals || !n.used) {
    gt_map_free(&n);
    return -1;
  }
  for (size_t i = 0; i < m->cap; i++)
    if (m->used[i] == 1)
      gt_map_put(&n, m->keys[i], m->vals[i]);
  gt_map_free(m);
  *m = n;
  return 0;
}

int gt_map_put(struct gt_map *m, uint64_t key, uint64_t val) {
  if ((m->count + m->tombstones + 1) * 4 >= m->cap * 3 &&
      rehash(m, m->cap ? (m->count * 4 >= m->cap ? m->cap * 2 : m->cap) : 64) != 0)
    return -1;
  size_t mask = m->cap - 1, i = mix(key) & mask, slot = SIZE_MAX;
  for (;; i = (i + 1) & mask) {
    if (m->used[i] == 1 && m->keys[i] == key) {
      m->vals[i] = val;
      return 0;
    }
    if (m->used[i] == 2 && slot == SIZE_MAX)
      slot = i;
    if (m->used[i] == 0)
      break;
  }
  if (slot == SIZE_MAX)
    slot = i;
  else
    m->tombstones--;
  m->used[slot] = 1;
  m->keys[slot] = key;
  m->vals[slot] = val;
  m->count++;
  return 0;
}

static size_t find(const struct gt_map *m, uint64_t key) {
  if (!m->cap)
    return SIZE_MAX;
  size_t mask = m->cap - 1;
  for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
    if (m->used[i] == 0)
      return SIZE_MAX;
    if (m->used[i] == 1 && m->keys[i] == key)
      return i;
  }
}

int gt_map_get(const struct gt_map *m, uint64_t key, uint64_t *val) {
  size_t i = find(m, key);
  if (i == SIZE_MAX)
    return 0;
  if (val)
    *val = m->vals[i];
  return 1;
}

uint64_t *gt_map_at(struct gt_map *m, uint64_t key) {
  size_t i = find(m, key);
  return i == SIZE_MAX ? NULL : &m->vals[i];
}

int gt_map_del(struct gt_map *m, uint64_t key) {
  size_t i = find(m, key);
  if (i == SIZE_MAX)
    return 0;
  m->used[i] = 2;
  m->count--;
  m->tombstones++;
  return 1;
}
