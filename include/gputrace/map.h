/* map.h — open-addressing hash map from a 64-bit key (0 allowed) to a
 * 64-bit value; grows as needed, memory proportional to the live entries.
 * Used by the collector and the CLI. */
#ifndef GPUTRACE_MAP_H
#define GPUTRACE_MAP_H

#include <stddef.h>
#include <stdint.h>

struct gt_map {
  uint64_t *keys;
  uint64_t *vals;
  unsigned char *used; /* 0 empty, 1 used, 2 deleted */
  size_t cap, count, tombstones;
};

void gt_map_init(struct gt_map *m);
void gt_map_free(struct gt_map *m);
int gt_map_put(struct gt_map *m, uint64_t key, uint64_t val);        /* 0 or -1 (OOM) */
int gt_map_get(const struct gt_map *m, uint64_t key, uint64_t *val); /* 1 found */
int gt_map_del(struct gt_map *m, uint64_t key);                      /* 1 removed */
/* Where key's value is kept, to change it in place (one probe); NULL when
 * absent. Valid until the next put or del. */
uint64_t *gt_map_at(struct gt_map *m, uint64_t key);

/* Key of (pid, 64-bit value) pairs: mixes the pid into the high bits. */
static inline uint64_t gt_pid_key(uint32_t pid, uint64_t v) {
  return v ^ ((uint64_t)pid * 0x9E3779B97F4A7C15ull);
}

#endif
