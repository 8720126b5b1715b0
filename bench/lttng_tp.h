/* lttng_tp.h — the LTTng-UST tracepoint bench/lttng_shim.c fires per launch:
 * the floor shim's payload (bench/floor_shim.c: two times, the kernel, the
 * stream, grid and block), as LTTng's provider header must be written
 * (included twice by lttng/tracepoint.h, hence the guard's form). */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER gputrace_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./lttng_tp.h"

#if !defined(GPUTRACE_BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define GPUTRACE_BENCH_LTTNG_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

LTTNG_UST_TRACEPOINT_EVENT(
    gputrace_bench, launch,
    LTTNG_UST_TP_ARGS(uint64_t, ts, uint64_t, dur, const void *, kernel, void *, stream,
                      const unsigned *, g, const unsigned *, b),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, ts, ts)
            lttng_ust_field_integer(uint64_t, dur, dur)
                lttng_ust_field_integer_hex(uintptr_t, kernel, (uintptr_t)kernel)
                    lttng_ust_field_integer_hex(uintptr_t, stream, (uintptr_t)stream)
                        lttng_ust_field_array(unsigned, grid, g, 3)
                            lttng_ust_field_array(unsigned, block, b, 3)))

#endif

#include <lttng/tracepoint-event.h>
