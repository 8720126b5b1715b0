/* order.h — records merged into time order (perf's ordered_events), for
 * the session (session.c), which decides when to take them out.
 *
 * Contract:
 *  - Records are added in file order, each with a 16-bit handle of the
 *    buffer holding it (the caller's, returned with it). gt_order_pop gives
 *    back the earliest buffered record: smallest ts_ns, ties in the order
 *    they were added — except that records of one stream never overtake
 *    each other, and that a DEVICE record is placed GT_ORDER_DEVICE_SLACK_NS
 *    after its ts_ns, after the host records at that time: the shim clamps
 *    device work to a CLOCK_MONOTONIC time read just before its call's own
 *    stamp, which is on the ring's clock (TSC ticks the collector converts),
 *    so work can read a few hundred ns earlier than the call that queued it
 *    (330 ns seen on the stand-in), and must still come after it. A stream
 *    is a thread's host records (pid, tid), a thread's DEVICE records
 *    (written later, by the shim's resolver thread), or a process's
 *    collector records (process start/end, drops, losses, frames, and the
 *    machine's metrics and notes): each keeps its file order even where its
 *    timestamps do not.
 *  - gt_order_ready says when the earliest record can be taken with
 *    nothing more to wait for: every stream active among the last
 *    GT_ORDER_ACTIVE records added has one buffered (a stream's records come
 *    in time order, so none of its later ones can be earlier; the
 *    collector's are stamped as it writes them, later than anything read
 *    before, and are not waited for), and a record
 *    GT_ORDER_HORIZON_NS later than it has been added (a stream not seen yet,
 *    a new thread or process, would have to reach the file later than that:
 *    the collector drains every ring each millisecond or so). Otherwise the
 *    caller waits for more records, as far as its window allows.
 *  - A record added with a timestamp earlier than one already popped came
 *    too late for the window the caller keeps: it is counted (gt_order_late)
 *    and comes out at the next pop that reaches its stream.
 *  - Memory: 24 bytes per buffered record plus one queue per stream.
 */
#ifndef GPUTRACE_MODEL_ORDER_H
#define GPUTRACE_MODEL_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "gputrace/schema.h"

#define GT_ORDER_ACTIVE (1u << 17) /* records: a stream quiet this long waits no more */
#define GT_ORDER_HORIZON_NS 10000000ull  /* 10 ms: see gt_order_ready */
#define GT_ORDER_DEVICE_SLACK_NS 2000ull /* see gt_order_pop */

struct gt_order;

struct gt_order *gt_order_new(void);
void gt_order_free(struct gt_order *o);
void gt_order_add(struct gt_order *o, const struct gt_record *rec, unsigned handle);
/* The earliest record can go now (see above). */
int gt_order_ready(const struct gt_order *o);
/* 1 with the earliest record and its handle, 0 when nothing is buffered. */
int gt_order_pop(struct gt_order *o, const struct gt_record **rec, unsigned *handle);
size_t gt_order_buffered(const struct gt_order *o);
uint64_t gt_order_late(const struct gt_order *o);

#endif
