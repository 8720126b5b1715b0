/* live_view.h — what `gputrace top` reads beside /metrics: /top.jsonl.
 *
 * Contract:
 *  - gt_live_view_observe sees the records prom.c counts (the drain loop's
 *    thread, no lock): graph launches expanded as prom.c expands them, so
 *    its memory figures are /metrics' own. O(1) per record: a heap-layer
 *    update (model/heap.h) and a map probe for the allocation's site.
 *  - gt_live_view_publish (the drain loop, each time prom.c publishes)
 *    ranks the allocation sites by live bytes, symbolizes the top
 *    LV_SITES ones' frames and copies the figures under the view's mutex.
 *  - gt_live_view_format (the HTTP thread) copies the published figures
 *    under that mutex and formats them outside it: JSON Lines, one object a
 *    line (docs/monitoring/README.md). Names and paths go here, never into
 *    Prometheus labels.
 *  - Bounded: LV_PROCS processes (later ones are not shown), each its live
 *    blocks and distinct allocating stacks; a process's state goes with its
 *    end record.
 */
#ifndef GPUTRACE_COLLECTOR_LIVE_VIEW_H
#define GPUTRACE_COLLECTOR_LIVE_VIEW_H

#include <stddef.h>

#include "gputrace/schema.h"

#define LV_PROCS 64  /* processes shown */
#define LV_SITES 16  /* allocation sites published, over all processes */
#define LV_FRAMES 12 /* frames of a site, innermost first */

struct gt_live_view;
struct gt_live_view *gt_live_view_new(void);
void gt_live_view_free(struct gt_live_view *v);
void gt_live_view_observe(struct gt_live_view *v, const struct gt_record *r);
void gt_live_view_publish(struct gt_live_view *v);
/* The text of /top.jsonl (malloc'd, *len set), or NULL. */
char *gt_live_view_format(struct gt_live_view *v, size_t *len);

#endif
