/* unwind.h — the shim's native unwinder: backtrace()'s frames at a cached
 * rule's cost (unwind.c has the contract). */
#ifndef GPUTRACE_UNWIND_H
#define GPUTRACE_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#define GT_UNWIND_MAX 256 /* the most frames one call gives */

/* Set up once at start-up, before any gt_unwind (not async-signal-safe):
 * libc's _dl_find_object (glibc 2.35+; without it modules are found with
 * dl_iterate_phdr) and its own backtrace() are looked up in libc.so.6 with
 * `lookup` (dlsym, or the shim's gt_real_dlsym: the shim wraps dlsym).
 * cached = 0: stacks from backtrace() (GPUTRACE_UNWIND=backtrace), which
 * is then warmed (glibc loads libgcc_s on its first call: dlopen, malloc). */
void gt_unwind_init(int cached, void *(*lookup)(void *handle, const char *name));

/* gt_unwind_info's how: the frames came from backtrace() (GPUTRACE_UNWIND=
 * backtrace); the stack is cut short — a frame the walk does not follow
 * (no unwind information, a rule it does not take) or one that would make
 * it read outside the stack (rbp holding something else): the frames up to
 * it are given, the outer ones are missing. */
#define GT_UNWIND_BACKTRACE 1u
#define GT_UNWIND_CUT 2u
struct gt_unwind_info {
  unsigned how;     /* GT_UNWIND_* */
  uint32_t unloads; /* the loader's unload count (dlpi_subs) the walk was under */
  /* The walk's number, unique in the process: a walk that gives the same
   * frames as this thread's last one, from the same place (the same stack
   * pointer, every stack word it read unchanged), has that one's number; 0:
   * not numbered (a walk interrupting another, one not kept). */
  uint64_t walk;
};

/* The calling thread's return addresses, innermost first, as backtrace()
 * called at the same place gives them: ips[0] is the return address into
 * gt_unwind's caller. At most min(max, GT_UNWIND_MAX) (from backtrace(),
 * max - 1). *info (if not NULL) says how they were taken. Never faults on a
 * bad stack. Thread- and async-signal-safe; no allocation; a descriptor
 * only while a thread's first walk on a stack reads /proc/self/maps; no
 * lock but the loader's (dl_iterate_phdr, for its unload count) and, in
 * that first walk, the kernel's for the maps. A walk from where this
 * thread's last one started, whose stack words are unchanged, is that walk
 * replayed (info->walk says so): same frames, a fraction of the cost. */
int gt_unwind_sp(void **ips, uintptr_t *sps, int max, struct gt_unwind_info *info);
static inline __attribute__((always_inline)) int gt_unwind(void **ips, int max,
                                                           struct gt_unwind_info *info) {
  return gt_unwind_sp(ips, NULL, max, info); /* inline: ips[0] is into the caller */
}

/* gt_unwind_sp: gt_unwind, with sps[i] the stack pointer of the frame ips[i] returns into
 * at that call (the callee's CFA; 0 when backtrace() gave the frames), for
 * finding a frame whose stack pointer a hook saw (launch.c). ips[0] is the
 * return address into gt_unwind_sp's caller. */

/* Since start (relaxed counts, shared by every thread). */
struct gt_unwind_counts {
  uint64_t backtrace;   /* stacks from backtrace() (GPUTRACE_UNWIND=backtrace) */
  uint64_t cut;         /* stacks cut short (GT_UNWIND_CUT) */
  uint64_t rules;       /* rules computed: misses of the cache */
  uint64_t cache_bytes; /* the rule cache's size (static, touched on use) */
};
void gt_unwind_counts(struct gt_unwind_counts *out);

#endif
