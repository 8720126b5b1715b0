/* collector.h — the pieces of gputrace-collector.
 *
 * Contract:
 *  - main.c parses options, opens the output, binds the socket and runs the
 *    loop: accept traced processes, drain their rings, finish when every
 *    traced process is gone and (in `record` mode) the recorder said so.
 *  - clients.c owns one traced process each: handshake checks (uid, sealed
 *    memfd, ring header), draining, drop accounting, the end of a process.
 *  - sink.c turns records into chunks and hands full chunks to a writer
 *    thread that compresses and writes them, so draining never waits on
 *    zstd or the disk. The queue is bounded; past the bound the drainer
 *    stops taking records and the rings absorb (then drop and count) the
 *    excess.
 */
#ifndef GPUTRACE_COLLECTOR_H
#define GPUTRACE_COLLECTOR_H

#include <stdint.h>

#include "gputrace/ring.h"
#include "gputrace/schema.h"

/* ---- sink.c ---- */
struct gt_sink;
struct gt_writer;

struct gt_sink *gt_sink_start(struct gt_writer *w);
/* 1 if a record of `nslots` fits without exceeding the queue bound. */
int gt_sink_has_room(struct gt_sink *s);
void gt_sink_put(struct gt_sink *s, const struct gt_record *rec);
/* Hand the pending chunk to the writer thread (periodic, so that a killed
 * collector loses at most one period of records). */
void gt_sink_cut(struct gt_sink *s);
/* Cut, wait for the writer to finish everything, stop the thread. */
void gt_sink_stop(struct gt_sink *s);
uint64_t gt_sink_records(const struct gt_sink *s);

/* ---- clients.c ---- */
struct gt_client;

/* Accept one connection from the listening socket; NULL if refused. */
struct gt_client *gt_client_accept(int listen_fd, struct gt_sink *sink);
int gt_client_fd(const struct gt_client *c);
uint32_t gt_client_pid(const struct gt_client *c);
/* Move committed records to the sink (at most `budget`). Returns the count. */
unsigned gt_client_drain(struct gt_client *c, struct gt_sink *sink, unsigned budget,
                         uint64_t now_ns);
/* The process has gone (EOF on its socket). */
void gt_client_hangup(struct gt_client *c);
/* 1 when hung up and fully drained: ready for gt_client_finish. */
int gt_client_done(const struct gt_client *c);
/* Write the process-end record and free. */
void gt_client_finish(struct gt_client *c, struct gt_sink *sink, uint64_t now_ns);

uint64_t gt_now_ns(void);
extern int gt_collector_quiet;

#endif
