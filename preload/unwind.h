/* unwind.h — the shim's native unwinder: backtrace()'s frames at a cached
 * rule's cost (unwind.c has the contract). */
#ifndef GPUTRACE_UNWIND_H
#define GPUTRACE_UNWIND_H

#include <stdint.h>

#define GT_UNWIND_MAX 256 /* the most frames one call gives */

/* Set up once at start-up, before any gt_unwind (not async-signal-safe):
 * libc's _dl_find_object (glibc 2.35+; without it modules are found with
 * dl_iterate_phdr) and its own backtrace() are looked up in libc.so.6 with
 * `lookup` (dlsym, or the shim's gt_real_dlsym: the shim wraps dlsym), and
 * backtrace() is warmed (glibc loads libgcc_s on its first call: dlopen,
 * malloc). cached = 0: every stack from backtrace() (GPUTRACE_UNWIND=
 * backtrace). */
void gt_unwind_init(int cached, void *(*lookup)(void *handle, const char *name));

/* The calling thread's return addresses, innermost first, as backtrace()
 * called at the same place gives them: ips[0] is the return address into
 * gt_unwind's caller. At most min(max, GT_UNWIND_MAX). *fell_back (if not
 * NULL) says whether they came from backtrace() itself. Thread- and
 * async-signal-safe; no allocation, no descriptor, no lock but the
 * loader's (dl_iterate_phdr, for its unload count). */
int gt_unwind(void **ips, int max, int *fell_back);

/* Since start (relaxed counts, shared by every thread): stacks taken from
 * backtrace() because a frame had rules the cache does not handle (a
 * signal frame, a CFA expression, code outside every module), and rules
 * computed (a cache miss each). */
struct gt_unwind_counts {
  uint64_t fallback;
  uint64_t rules;       /* rules computed: misses of the cache */
  uint64_t cache_bytes; /* the rule cache's size (static, touched on use) */
};
void gt_unwind_counts(struct gt_unwind_counts *out);

#endif
