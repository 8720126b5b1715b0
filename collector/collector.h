/* collector.h — the pieces of gputrace-collector.
 *
 * Contract:
 *  - main.c parses options, opens the output, binds the socket and runs the
 *    loop: accept traced processes, drain their rings, finish when every
 *    traced process is gone and (in `record` mode) the recorder said so.
 *  - clients.c owns one traced process each: handshake checks (uid, the
 *    contract, sealed memfd, ring header and size), draining, drop
 *    accounting, the end of a process (by its pidfd, not by its socket).
 *  - contract.c says which contract (protocol.h) this collector speaks: a
 *    file of its own, so the tests build a collector that claims another
 *    (tests/CMakeLists.txt, gputrace-collector-skewed) from the same code.
 *  - fds.c keeps the collector within its descriptors (2 per process): the
 *    soft limit raised to the hard one, then a back-off, never a spin, when
 *    they run out; a process that finds none waits up to 3 s, then is told
 *    why (GT_ACK_NO_FDS), and the trace counts both.
 *  - knames.c holds each process's kernel names back until a launch
 *    refers to them: names of kernels never launched never reach the file.
 *  - symworker.c symbolizes stacks on a thread of its own (symbols.c).
 *  - output.c writes chunks to the trace file or a rolling set, whose files
 *    each repeat what they need to be read alone (graph_cache.c keeps how
 *    each graph was made for them, heap_carry.c what each process holds).
 *    The flight recorder is such a set in memory: flight.c writes its
 *    window as one trace when control.c is asked (a socket, SIGUSR2).
 *  - sink.c turns records into chunks and queues them; the main loop
 *    compresses and writes one queued chunk after a pass over the rings,
 *    unless a ring holds a backlog of GT_DRAIN_FIRST_PCT (1 %) of its room
 *    (main.c): then draining comes first and the queue (pre-faulted buffers
 *    first) absorbs the backlog. The queue is
 *    bounded; past the bound the drainer stops taking records and the rings
 *    absorb (then drop and count) the excess.
 */
#ifndef GPUTRACE_COLLECTOR_H
#define GPUTRACE_COLLECTOR_H

#include <stdint.h>

#include "gputrace/protocol.h"
#include "gputrace/ring.h"
#include "gputrace/schema.h"

/* ---- contract.c: gt_contract_ours() as this collector was built ---- */
struct gt_contract gt_collector_contract(void);

/* ---- listen.c: the socket, with a lock file against racing collectors.
 * gt_listen returns the listening fd (non-blocking) or -1 (patient: a
 * stand-alone collector's, which waits out a lock held for a moment);
 * gt_unlisten removes the socket and the lock file (and a private socket
 * directory). */
int gt_listen(const char *path, int *lock_fd, int patient);
void gt_unlisten(const char *path, int listen_fd, int lock_fd);

/* ---- fds.c: the collector's file descriptors (2 per traced process).
 * gt_fds_start raises the soft RLIMIT_NOFILE to the hard one and opens a
 * reserve descriptor; returns the limit (0: unlimited). gt_fds_short: none
 * was free (EMFILE, ENFILE) — a shortage, logged the first time, during
 * which gt_fds_starved holds: the listening socket is not polled, and
 * gt_fds_retry is 0 until a descriptor frees (gt_fds_freed) or 100 ms pass;
 * gt_fds_ok ends it. gt_fds_room: whether one is free now (a probe, only
 * when gt_fds_retry; a failed one is a shortage). gt_fds_use_reserve closes
 * the reserve for one more accept (1 if it was open); gt_fds_refill reopens
 * it. gt_fds_count(traced): a process that waited for a descriptor was
 * traced, or (0) ran untraced for want of one; gt_fds_waited and
 * gt_fds_told are those counts, gt_fds_last_short when a descriptor was
 * last missing (0: never). ---- */
unsigned long gt_fds_start(void);
unsigned long gt_fds_limit(void);
void gt_fds_short(uint64_t now_ns);
int gt_fds_starved(void);
int gt_fds_retry(uint64_t now_ns);
void gt_fds_freed(void);
void gt_fds_ok(void);
int gt_fds_room(uint64_t now_ns);
int gt_fds_use_reserve(void);
void gt_fds_refill(void);
void gt_fds_count(int traced);
uint64_t gt_fds_waited(void);
uint64_t gt_fds_told(void);
uint64_t gt_fds_last_short(void);

/* ---- output.c: one trace file, or a rolling set (always-on recording) ---- */
struct gt_output;
struct gt_output_opts {
  const char *path;
  int mode;              /* enum gt_out_mode: NEW (default), FORCE, APPEND (autospawn) */
  int fd;                /* >= 0: the file, opened by `record` (path names it) */
  int pick;              /* path is a name we chose: when taken, use BASE-N.gtrace */
  uint64_t max_bytes;    /* --max-size: total of the set; 0 = no limit */
  uint64_t keep_ns;      /* --keep: age of the oldest file; 0 = no limit */
  uint64_t roll_bytes;   /* --roll-size: bytes per file (default max/4) */
  uint64_t flight_bytes; /* --flight-recorder: the window kept in memory; 0 = off */
};
struct gt_output *gt_output_open(const struct gt_output_opts *o, char *err,
                                 size_t errlen);
int gt_output_write_chunk(struct gt_output *out, const void *slots, size_t len,
                          uint32_t records);
int gt_output_roll(struct gt_output *out); /* close this file, start the next */
void gt_output_tick(struct gt_output *out, uint64_t now_ns); /* --keep rolls */
uint64_t gt_output_records(const struct gt_output *out);
uint64_t gt_output_lost(const struct gt_output *out);
uint64_t gt_output_bytes(const struct gt_output *out);
uint64_t gt_output_deleted(const struct gt_output *out);
uint64_t gt_output_kept(const struct gt_output *out);    /* the set's bytes now */
const char *gt_output_path(const struct gt_output *out); /* the file being written */
const char *gt_output_error(const struct gt_output *out);
/* A rolling set's graph cache (zeros for a single file). */
struct gt_graph_cache_stats;
void gt_output_graph_stats(const struct gt_output *out, struct gt_graph_cache_stats *st);
/* A record of a graph's making or use (graph_cache.c keeps it, not the heap
 * carry), and a definition later records refer to (each file repeats it). */
static inline int gt_output_is_graph(const struct gt_record *r) {
  return r->kind == GT_KIND_GRAPH ||
         (r->flags & (GT_F_GRAPH | GT_F_CAPTURED | GT_F_NODE));
}
static inline int gt_output_is_meta(const struct gt_record *r) {
  switch (r->kind) {
  case GT_KIND_PROCESS:
    return r->u.proc.phase == GT_PROC_START;
  case GT_KIND_KERNEL_NAME:
  case GT_KIND_MODULE:
  case GT_KIND_STACK:
  case GT_KIND_PYFRAME:
  case GT_KIND_FRAME:
    return 1;
  default:
    return 0;
  }
}
int gt_output_close(struct gt_output *out);
/* The flight recorder's window as one trace on fd (named `name` in
 * messages; not closed): the segments closed within last_ns (0: all), after
 * a roll, cut at now - last_ns (gt_flight_compose). 0, or -1 with a message
 * in err. */
struct gt_snapshot_stats;
int gt_output_snapshot(struct gt_output *out, int fd, const char *name, uint64_t last_ns,
                       struct gt_snapshot_stats *st, char *err, size_t errlen);
/* gputrace start: from now on records go to fd's file (it starts with the
 * names, stacks and live allocations) instead of the window, until
 * gt_output_stop finishes it (st: what it holds) and the window goes on.
 * Each writes the note (a NOTE record) on both sides of the switch. */
int gt_output_start(struct gt_output *out, int fd, const char *note, char *err,
                    size_t errlen);
int gt_output_stop(struct gt_output *out, const char *note, struct gt_snapshot_stats *st,
                   char *err, size_t errlen);

/* ---- flight.c: a snapshot of the flight recorder's segments, and the
 * control socket that asks for one ---- */
struct gt_segment {
  int fd;         /* a complete trace file in memory (a memfd), read with pread */
  uint32_t index; /* its number in the set (GT_F_REPLAY_BLOCK's last_file) */
  uint64_t opened_ns, closed_ns;
};
struct gt_snapshot_stats {
  uint64_t records, bytes; /* written */
  uint64_t segments;       /* read */
  uint64_t from_ns, to_ns; /* when the first segment opened, the last closed */
};
/* Write segs (oldest first) to fd as one trace: the first whole, each later
 * one without the records it repeats (GT_F_REPLAYED), except the making of
 * a graph no earlier segment of the snapshot holds. from_ns (0: none) cuts
 * the window there: records stamped before it are its past (flight.c's
 * contract). 0, or -1 and err. */
int gt_flight_compose(const struct gt_segment *segs, size_t n, uint64_t from_ns, int fd,
                      const char *name, struct gt_snapshot_stats *st, char *err,
                      size_t errlen);

/* ---- graph_cache.c: how each graph was made, for the files of a rolling set ---- */
struct gt_graph_cache;
struct gt_replay_buf { /* records to write before the one at hand */
  unsigned char *data;
  size_t len, cap;
  uint32_t records;
};
struct gt_graph_cache_stats {
  uint64_t bytes;           /* kept now */
  uint64_t groups;          /* live (graphs with their executables and captures) */
  uint64_t ended_groups;    /* forgotten as every object in them ended */
  uint64_t dropped_groups;  /* live but not kept (no room): bare in later files */
  uint64_t dropped_records; /* their records, not kept */
  uint64_t ever_dropped_groups, ever_dropped_records; /* over the run */
  uint64_t replayed_groups, replayed_records;         /* repeated into files */
};
#define GT_GRAPH_CACHE_MAX (32u << 20) /* a set's graph making kept (output.c) */
struct gt_graph_cache *gt_graph_cache_new(size_t max_bytes);
void gt_graph_cache_free(struct gt_graph_cache *c);
/* `rec` goes into file number `file` next: first append to `out` the making
 * of what it names that the file does not hold yet (a marker, then the
 * records), then keep it if it is part of a graph's making. */
void gt_graph_cache_put(struct gt_graph_cache *c, const struct gt_record *rec,
                        uint32_t file, struct gt_replay_buf *out);
void gt_graph_cache_forget(struct gt_graph_cache *c, uint32_t pid); /* it ended */
void gt_graph_cache_stats(const struct gt_graph_cache *c,
                          struct gt_graph_cache_stats *st);

/* ---- heap_carry.c: the live allocations of each process, for the files
 * of a rolling set ---- */
struct gt_heap_carry;
struct gt_heap_carry *gt_heap_carry_new(void);
void gt_heap_carry_free(struct gt_heap_carry *c);
/* An ALLOC or FREE record that goes into the files (others are ignored). */
void gt_heap_carry_put(struct gt_heap_carry *c, const struct gt_record *rec);
void gt_heap_carry_forget(struct gt_heap_carry *c, uint32_t pid); /* it ended */
/* Append what a new file starts with: each process's live blocks (their
 * ALLOC records) and its peaks (a HEAP record stamped now_ns). */
void gt_heap_carry_write(struct gt_heap_carry *c, uint64_t now_ns,
                         struct gt_replay_buf *out);
uint64_t gt_heap_carry_blocks(const struct gt_heap_carry *c); /* live now */
/* What a file starts with (an ALLOC or HEAP record flagged GT_F_CARRIED):
 * taken as the blocks live and the peaks reached before its records. */
void gt_heap_carry_seed(struct gt_heap_carry *c, const struct gt_record *rec);

/* ---- control.c: the control socket and SIGUSR2, which ask the flight
 * recorder for a snapshot. Open: listen beside data_socket (NULL and err
 * when it cannot); SIGUSR2's snapshots go beside `output`. Serve, once a
 * pass of the drain loop: the snapshot SIGUSR2 asked for (signalled), and
 * the requests pending on the socket, and the triggers' (below). NULL is
 * accepted by serve, observe and close (which removes the socket). ---- */
struct gt_control;
struct gt_sink;
struct gt_control *gt_control_open(const char *data_socket, const char *output, char *err,
                                   size_t errlen);
/* alerted: snapshots the --snapshot-webhook asked for (gt_prom_alerts). */
struct gt_symq;
void gt_control_serve(struct gt_control *c, int signalled, unsigned alerted,
                      struct gt_sink *sink, struct gt_output *out, uint64_t now_ns,
                      const struct gt_symq *names);
/* Each record the sink takes: an allocation out of memory asks for a
 * snapshot (BASE.oom-N.gtrace). Every snapshot is written by a later serve
 * once `names` (the symbolizer's queue) has named the stacks taken before
 * it was asked for, or after a bounded wait. */
void gt_control_observe(struct gt_control *c, const struct gt_record *rec);
/* A traced process (pid) died of signal sig (0: a signal not seen), told
 * by record or seen by the collector, and its records are all taken: a
 * snapshot (BASE.signal-N.gtrace) by a later serve, unless sig is SIGINT,
 * SIGTERM or SIGHUP (control.c's contract: the same death told twice).
 * Pending: a snapshot is due (a death's, or one waiting for names), so the
 * run must not end yet. */
void gt_control_died(struct gt_control *c, int sig, uint32_t pid);
int gt_control_pending(const struct gt_control *c);
void gt_control_close(struct gt_control *c);

/* ---- knames.c: kernel names held back until a launch refers to them ---- */
struct gt_knames;
struct gt_knames *gt_knames_new(void);
void gt_knames_free(struct gt_knames *k);
/* A KERNEL_NAME record from the ring: 1 write it now, 0 held (copied). */
int gt_knames_offer(struct gt_knames *k, const struct gt_record *rec);
/* A launch or DEVICE record refers to `kernel`: the held name to write just
 * before it (valid until the next call), or NULL. With `unknown`, a kernel
 * never seen sets *unknown and is not remembered (look ahead, ask again). */
const struct gt_record *gt_knames_refer(struct gt_knames *k, uint64_t kernel,
                                        int *unknown);

/* ---- sink.c ---- */
struct gt_sink;

struct gt_sink *gt_sink_start(struct gt_output *out);
/* 1 while the queue of chunks awaiting compression is under its bound. */
int gt_sink_has_room(struct gt_sink *s);
void gt_sink_put(struct gt_sink *s, const struct gt_record *rec);
/* A NOTE record of the collector's own (text: a C string, cut to GT_TEXT_MAX),
 * about process pid (0: the run or the machine), with its flags
 * (GT_F_INCOMPLETE, GT_F_UNTRACED: what readers warn about). */
void gt_sink_note(struct gt_sink *s, uint64_t ts_ns, uint32_t pid, uint32_t flags,
                  const char *text);
/* Zero-copy variant: room for GT_MAX_SLOTS slots at the end of the current
 * chunk; fill it, then gt_sink_commit takes the record (rec->nslots). */
struct gt_record *gt_sink_space(struct gt_sink *s);
void gt_sink_commit(struct gt_sink *s);
/* Queue the chunk being filled (periodic, so that a killed collector loses
 * at most one period of records). */
void gt_sink_cut(struct gt_sink *s);
/* Compress and write the oldest queued chunk: 1 if there was one. */
int gt_sink_write_one(struct gt_sink *s);
/* 1 while chunks are queued. */
int gt_sink_pending(const struct gt_sink *s);
/* Cut, write everything, free. */
void gt_sink_stop(struct gt_sink *s);
uint64_t gt_sink_records(const struct gt_sink *s);
/* Call fn(ctx, rec) for every record the sink takes (live metrics). */
void gt_sink_observe(struct gt_sink *s,
                     void (*fn)(void *ctx, const struct gt_record *rec), void *ctx);

/* ---- clients.c ---- */
struct gt_client;
struct gt_symq;

/* Accept one pending connection (non-blocking); NULL when none (errno
 * EAGAIN) or none could be taken (errno EMFILE, ENFILE: out of descriptors,
 * fds.c; ENOMEM). The client starts in the handshake: gt_client_event
 * completes or refuses it. */
struct gt_client *gt_client_accept(int listen_fd, struct gt_symq *symq, uint64_t now_ns);
/* What to poll: the connection and the pidfd; -1 for either once closed,
 * absent, or once the process is known to have ended. */
int gt_client_fd(const struct gt_client *c);
int gt_client_pidfd(const struct gt_client *c);
/* Handle readiness of those descriptors (revents, 0 for none); called every
 * pass for deadlines. Returns 1 when the handshake just completed, -1 when
 * the client was refused (free it with gt_client_free), else 0. */
int gt_client_event(struct gt_client *c, short sock_revents, short pid_revents,
                    struct gt_sink *sink, uint64_t now_ns);
int gt_client_live(const struct gt_client *c); /* past the handshake */
/* How it ended: -1 not a death (exit(), _exit(), exec, or running), else
 * killed by that signal (0: a signal not seen, its zombie already reaped). */
int gt_client_death(const struct gt_client *c);
/* Live and its process not known to have ended. */
int gt_client_running(const struct gt_client *c);
/* How full the process's ring is, in percent. */
unsigned gt_client_fill_pct(const struct gt_client *c);
uint32_t gt_client_pid(const struct gt_client *c);
/* Move committed records to the sink (at most `budget`). Returns the count. */
unsigned gt_client_drain(struct gt_client *c, struct gt_sink *sink, unsigned budget,
                         uint64_t now_ns);
/* The process has gone (or the collector is stopping), as of now_ns (its
 * END's time): drain what is left. */
void gt_client_hangup(struct gt_client *c, uint64_t now_ns);
/* 1 when hung up, fully drained and its stacks symbolized (or the
 * symbolizer has kept it waiting 5 s): ready for gt_client_finish. */
int gt_client_done(const struct gt_client *c, uint64_t now_ns);
/* Write the process-end record and free. */
void gt_client_finish(struct gt_client *c, struct gt_sink *sink, uint64_t now_ns);
void gt_client_free(struct gt_client *c);

/* ---- symbols.c: addresses -> FRAME records (libdwfl); worker thread only ---- */
struct gt_symbolizer;
typedef void (*gt_sym_put_fn)(void *ctx, const struct gt_record *frame);
struct gt_symbolizer *gt_sym_new(void);
void gt_sym_free(struct gt_symbolizer *s);
void gt_sym_add_module(struct gt_symbolizer *s, uint32_t pid,
                       const struct gt_record *module);
/* put() FRAME records for the stack's addresses this process had not shown. */
void gt_sym_stack(struct gt_symbolizer *s, uint32_t pid, const struct gt_record *stack,
                  gt_sym_put_fn put, void *ctx);
void gt_sym_forget(struct gt_symbolizer *s, uint32_t pid); /* the process ended */

/* ---- symworker.c: symbols.c on a worker thread, so no symbol file can
 * stall draining. Push copies STACK/MODULE records (returns the item's
 * number, 0 when a stack was left out: backlog over 64 MiB, counted);
 * take moves finished FRAME records to the sink (drain loop); done says
 * whether item `seq`'s frames are in the sink. Push, take and pace never
 * wait for the worker (it may hold the queue's lock: then items and
 * frames wait for a later call). Stop waits for the backlog until the
 * worker has made no progress for stall_ns, and writes a NOTE for what was
 * left. Pace, after each drain pass with the records it moved: a storm
 * (GT_SYMQ_BUSY_RECORDS a pass) holds the worker, for up to 1 s (stop
 * does not wait for it). NULL is accepted everywhere. ---- */
struct gt_symq *gt_symq_start(void);
uint64_t gt_symq_push(struct gt_symq *q, uint32_t pid, const struct gt_record *rec);
void gt_symq_end(struct gt_symq *q, uint32_t pid);
void gt_symq_pace(struct gt_symq *q, unsigned moved, uint64_t now_ns);
int gt_symq_done(const struct gt_symq *q, uint64_t seq);
uint64_t gt_symq_pushed(const struct gt_symq *q); /* the last item's number */
void gt_symq_take(struct gt_symq *q, struct gt_sink *sink);
void gt_symq_stop(struct gt_symq *q, struct gt_sink *sink, uint64_t stall_ns);

/* ---- nvml.c: hardware metrics (METRIC records) from libnvidia-ml.so.1 ----
 * Start: dlopen NVML and start a sampling thread (every GPUTRACE_NVML_MS,
 * default 500 ms); without NVML (or without devices) put one NOTE record
 * "nvml unavailable" in the sink and return NULL. Take: move the queued
 * readings to the sink (wait = 0: only if the lock is free, for the drain
 * loop; XID events also as a NOTE each). Stop: join the thread, take the
 * rest, unload. NULL is accepted. gt_nvml_device: device `dev`'s UUID and
 * name ("" when NVML gave none), 0 past the last device. */
struct gt_nvml;
struct gt_nvml *gt_nvml_start(struct gt_sink *sink);
int gt_nvml_device(const struct gt_nvml *n, unsigned dev, const char **uuid,
                   const char **name);
void gt_nvml_take(struct gt_nvml *n, struct gt_sink *sink, int wait);
void gt_nvml_stop(struct gt_nvml *n, struct gt_sink *sink);

/* ---- prom.c: live metrics on /metrics (libmicrohttpd), and /top.jsonl
 * for `gputrace top` (live_view.h) ----
 * Start serves ADDR:PORT from libmicrohttpd's thread (NULL and a message in
 * err when it cannot). gt_prom_observe is the sink's observer (the drain
 * loop: no lock); gt_prom_publish copies the counters for the HTTP thread
 * at most every 100 ms (force: now). NULL is accepted by publish, stop and
 * gpu_info (the identity of NVML's device `gpu`, for dcgm-exporter's
 * labels; the drain loop's thread). webhook (--snapshot-webhook): 0, or
 * GT_WEBHOOK_LOCAL / GT_WEBHOOK_ANY: POST /snapshot is taken from loopback
 * peers only, or from any; gt_prom_alerts takes the count of those taken
 * since it last asked (any thread; the drain loop hands it to control.c). */
enum { GT_WEBHOOK_OFF, GT_WEBHOOK_LOCAL, GT_WEBHOOK_ANY };
struct gt_prom;
struct gt_prom *gt_prom_start(const char *addr_port, int webhook, char *err,
                              size_t errlen);
unsigned gt_prom_alerts(struct gt_prom *p);
void gt_prom_observe(void *prom, const struct gt_record *rec);
void gt_prom_publish(struct gt_prom *p, uint64_t now_ns, int force);
void gt_prom_stop(struct gt_prom *p);
void gt_prom_gpu_info(struct gt_prom *p, unsigned gpu, const char *uuid,
                      const char *model);

/* ---- liveprof.c: live pprof profiles of each traced process ----
 * Start checks DIR is a writable directory (NULL and a message in err when
 * not). gt_liveprof_observe is a sink observer (the drain loop); tick
 * writes the profiles whose interval has passed; stop writes the last ones
 * of processes still known and frees it all. NULL is accepted by tick and
 * stop. */
struct gt_liveprof;
struct gt_liveprof *gt_liveprof_start(const char *dir, uint64_t every_ns, unsigned keep,
                                      char *err, size_t errlen);
void gt_liveprof_observe(void *lp, const struct gt_record *rec);
void gt_liveprof_tick(struct gt_liveprof *lp, uint64_t now_ns);
void gt_liveprof_stop(struct gt_liveprof *lp);

/* ---- log.c: what the collector tells its user ----
 * Messages go to stderr as "gputrace-collector: <message>", one line each,
 * unless --quiet set gt_collector_quiet. */
extern int gt_collector_quiet;
__attribute__((format(printf, 1, 2))) void gt_collector_say(const char *fmt, ...);

/* ---- tsc.c: the collector's clock, and TSC ticks -> CLOCK_MONOTONIC ns ----
 * gt_now_ns is CLOCK_MONOTONIC, the clock of every record's ts_ns.
 * Rings stamped with GT_CLOCK_TSC are converted as they are drained, with a
 * tick length measured against CLOCK_MONOTONIC: first over a few ms at
 * start, then over the whole run (refreshed every 100 ms), so the error
 * shrinks from ~1e-5 to ~1e-8 as the run goes on; the conversion is
 * continuous and increasing across refreshes (tsc.c's contract).
 * gt_tsc_start and gt_tsc_anchor are calibrate's and refresh's work on
 * given (tsc, monotonic) samples (test_tsc feeds its own). */
uint64_t gt_now_ns(void);
void gt_tsc_calibrate(void);
void gt_tsc_refresh(uint64_t now_ns);
void gt_tsc_start(uint64_t tsc0, uint64_t mono0, uint64_t tsc1, uint64_t mono1);
void gt_tsc_anchor(uint64_t tsc, uint64_t mono);
uint64_t gt_tsc_to_ns(uint64_t ticks);
uint64_t gt_tsc_span_ns(uint64_t ticks);

#endif
