/* profiles.h — pprof profiles (pprof_build.h) of device memory and of GPU
 * time, built from a stream of records: for `gputrace pprof` (a trace file,
 * optionally windowed: cmd_pprof.c) and for the collector's live profiles
 * (collector/liveprof.c, record by record while the program runs).
 *
 * Contract:
 *  - gt_memprof takes the heap layer's events (model.h, GT_LAYER_HEAP) of
 *    ALLOC and FREE records, in order. It counts successful allocations by
 *    (pid, allocation stack, memory kind) since it was made or last
 *    restarted, and keeps the blocks it saw allocated that are still live:
 *    a free matched by the heap layer ends one, as does a new allocation at
 *    the address of a block whose free was not seen. cuMemMap records hold
 *    no memory (cuMemCreate's do). Memory: bounded by live blocks and sites.
 *  - gt_memprof_profile: Go's heap sample types in Go's order —
 *    alloc_objects/count, alloc_space/bytes (allocations since the start or
 *    the last gt_memprof_restart), inuse_objects/count, inuse_space/bytes
 *    (the blocks live now) — labelled `memory` and `pid`; inuse_space is
 *    the default sample type. Sites whose four values are all 0 are left
 *    out.
 *  - gt_gpuprof_profile: a finished gt_gpu_attr (gpu_attr.h) as
 *    launches/count, gpu_time/nanoseconds, bytes/bytes by launch stack, the
 *    kernel (or "memcpy HtoD", "memset") as the leaf, labelled `kind` and
 *    `pid`; gpu_time is the default sample type.
 *  - Stacks come from the symbol table: native frames with their module's
 *    mapping, inline levels of one address in one location, Python frames
 *    as locations of their own; a stack not (yet) known is "[no stack]".
 */
#ifndef GPUTRACE_MODEL_PROFILES_H
#define GPUTRACE_MODEL_PROFILES_H

#include "gpu_attr.h"
#include "model.h"
#include "pprof_build.h"

struct gt_memprof;

struct gt_memprof *gt_memprof_new(void);
void gt_memprof_feed(struct gt_memprof *m, const struct gt_event *ev);
void gt_memprof_restart(struct gt_memprof *m); /* alloc_* from 0 again */
struct gt_pprof *gt_memprof_profile(struct gt_memprof *m, struct gt_symtab *st);
void gt_memprof_free(struct gt_memprof *m);

struct gt_pprof *gt_gpuprof_profile(const struct gt_gpu_attr *g, struct gt_symtab *st);

#endif
