/* control.c — asking the flight recorder for a snapshot (see collector.h).
 *
 * Contract:
 *  - The control socket (paths.h's gt_control_socket_path: beside the data
 *    socket, in the per-user 0700 directory; mode 0600) takes one request
 *    per connection (protocol.h): a peer of another uid is refused
 *    (SO_PEERCRED), whatever the directory's mode. The snapshot's file is
 *    the requester's descriptor: the collector opens no path for it, so the
 *    file has the requester's name, rules (outfile.h) and namespace.
 *  - SIGUSR2 writes a snapshot to a name of the collector's choosing:
 *    BASE.snapshot-N.gtrace beside the output (BASE: it less ".gtrace", N
 *    the first free from 1; outfile.h's gt_out_pick), said on stderr.
 *  - A snapshot is taken on the drain loop's thread (gt_control_serve, once
 *    a pass): everything the sink holds is written into the window first,
 *    then the window is composed (flight.c). Draining waits meanwhile (the
 *    rings absorb it: docs/PERFORMANCE.md, Flight recorder). The request
 *    socket is polled, not waited on: a pass looks at most every 10 ms.
 *  - Every snapshot (SIGUSR2's, a request's, each trigger's) and every
 *    stop waits, up to NAMES_WAIT_NS, for the symbolizer to have named the
 *    stacks taken before it was asked for, so that it names the lines
 *    asked about (a stack first seen just before is the likeliest to be
 *    that one); the drain loop goes on meanwhile. A request waiting holds
 *    the socket's others in its backlog; one the run's end overtakes is
 *    answered with an error.
 *  - gputrace start/stop (protocol.h GT_CTL_START/STOP) switch the output
 *    between the window and the requester's file (output.c,
 *    gt_output_start/stop), on the drain loop's thread as a snapshot is:
 *    everything taken before the request goes to the side it leaves.
 *  - Triggers: an allocation that failed for want of memory (schema.h's
 *    gt_record_out_of_memory), seen as the sink takes it (gt_control_observe),
 *    writes a snapshot to BASE.oom-N.gtrace as SIGUSR2's does, said on
 *    stderr in one line; at most one per OOM_INTERVAL_NS (a storm of
 *    failures writes one, the first's). The --snapshot-webhook's
 *    requests (POST /snapshot, prom.c; an Alertmanager's alerts) write
 *    BASE.alert-N.gtrace the same way, at most one per ALERT_INTERVAL_NS:
 *    the first of a storm, the rest said once each as coalesced.
 *  - A traced process's death by a signal writes BASE.signal-N.gtrace,
 *    named as the OOM trigger's, once the process's records are all taken,
 *    unless the signal ends programs on purpose (SIGINT, SIGTERM, SIGHUP);
 *    at most one per OOM_INTERVAL_NS (the rest said as coalesced). Two may
 *    tell of it (gt_control_died): `record`, of its command (its control
 *    pipe, protocol.h GT_CONTROL_DIED), with the signal its wait gave; and
 *    the collector, of any process it traced whose ring neither exit() nor
 *    _exit() marked (clients.c), with the signal its zombie showed, or none
 *    when its parent reaped it first. The same death told twice is one:
 *    the signal known wins, a deliberate one from either cancels it, and a
 *    death without a known signal waits DEATH_WORD_NS for record's word. A
 *    death served or cancelled stays settled. The run does not end while
 *    a snapshot is pending (gt_control_pending).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "collector.h"
#include "gputrace/outfile.h"
#include "gputrace/paths.h"
#include "gputrace/protocol.h"

#define POLL_EVERY_NS 10000000ull
#define OOM_INTERVAL_NS 10000000000ull   /* at most one out-of-memory snapshot per 10 s */
#define NAMES_WAIT_NS 10000000000ull     /* the longest a snapshot waits for names */
#define ALERT_INTERVAL_NS 10000000000ull /* at most one webhook snapshot per 10 s */
#define DEATH_WORD_NS 500000000ull       /* a death whose signal was not seen waits */

/* A snapshot waiting for the names of the stacks taken before it was
 * asked for (those the symbolizer's queue numbers up to `upto`). */
struct names_wait {
  uint64_t since_ns; /* 0: none waits */
  uint64_t upto;
};

/* An accepted request: its connection, its descriptor (-1: none), its
 * line, why it is refused (empty: it is not). */
struct request {
  int conn, fd;
  char line[GT_CTL_LINE_MAX], err[400];
  struct names_wait names; /* a snapshot's */
};

struct gt_control {
  int fd;
  uint64_t polled_ns;
  char path[108];
  char base[4096];         /* SIGUSR2's snapshots: BASE.snapshot-N.gtrace */
  struct names_wait asked; /* SIGUSR2's snapshot is pending */
  struct request held;     /* a snapshot request waiting for names (conn -1: none) */
  int oom_seen;            /* an out-of-memory failure came since the last pass */
  struct names_wait oom;   /* its snapshot is pending */
  struct names_wait alert; /* a webhook's snapshot is pending */
  unsigned alerts_joined;  /* requests coalesced into the pending one */
  uint64_t oom_last_ns;    /* the last out-of-memory snapshot; 0: none yet */
  uint64_t alert_last_ns;  /* the last webhook snapshot; 0: none yet */
  int died;                /* a death awaits its snapshot */
  int died_sig;            /* by this signal (0: not seen) */
  uint32_t died_pid;       /* of this process */
  struct names_wait death; /* since the first serve after it */
  uint32_t settled_pid;    /* the last death served or cancelled */
  uint64_t death_last_ns;  /* the last death's snapshot; 0: none yet */
};

static void answer(struct request *r, const struct gt_snapshot_stats *st);

struct gt_control *gt_control_open(const char *data_socket, const char *output, char *err,
                                   size_t errlen) {
  struct gt_control *c = calloc(1, sizeof *c);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  if (!c) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  c->held.conn = -1;
  snprintf(c->base, sizeof c->base, "%s", output);
  size_t len = strlen(c->base);
  if (len > 7 && strcmp(c->base + len - 7, ".gtrace") == 0)
    c->base[len - 7] = '\0';
  if (gt_control_socket_path(data_socket, (unsigned long)getpid(), c->path,
                             sizeof c->path) != 0) {
    snprintf(err, errlen, "control socket path too long beside %s", data_socket);
    free(c);
    return NULL;
  }
  memcpy(addr.sun_path, c->path, sizeof c->path);
  unlink(c->path); /* an earlier collector of this pid's, dead */
  c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  mode_t old = umask(077);
  int bound = c->fd >= 0 && bind(c->fd, (struct sockaddr *)&addr, sizeof addr) == 0;
  umask(old);
  if (!bound || listen(c->fd, 8) != 0) {
    snprintf(err, errlen, "control socket %s: %s", c->path, strerror(errno));
    if (c->fd >= 0)
      close(c->fd);
    free(c);
    return NULL;
  }
  return c;
}

void gt_control_close(struct gt_control *c) {
  if (!c)
    return;
  if (c->held.conn >= 0) { /* the run ended first: the requester hears why */
    snprintf(c->held.err, sizeof c->held.err, "the collector is stopping");
    struct gt_snapshot_stats none = {0};
    answer(&c->held, &none);
  }
  close(c->fd);
  unlink(c->path);
  free(c);
}

/* Everything taken so far into the window, then the snapshot on fd. */
static int snapshot(struct gt_sink *sink, struct gt_output *out, int fd, const char *name,
                    uint64_t last_ns, struct gt_snapshot_stats *st, char *err,
                    size_t errlen) {
  gt_sink_cut(sink);
  while (gt_sink_write_one(sink))
    ;
  return gt_output_snapshot(out, fd, name, last_ns, st, err, errlen);
}

/* The request's line and its descriptor (-1 when none came). */
static ssize_t read_request(int conn, char *line, size_t len, int *fd) {
  char cbuf[CMSG_SPACE(sizeof(int))];
  struct iovec iov = {line, len - 1};
  struct msghdr msg = {.msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = cbuf,
                       .msg_controllen = sizeof cbuf};
  *fd = -1;
  ssize_t got = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
  for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); got >= 0 && cm;
       cm = CMSG_NXTHDR(&msg, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && *fd < 0)
      memcpy(fd, CMSG_DATA(cm), sizeof *fd);
  line[got > 0 ? got : 0] = '\0';
  return got;
}

/* What a request's descriptor must be: a file we can write and read back. */
static int check_file(int fd, char *err, size_t errlen) {
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0 || !(S_ISREG(sb.st_mode) || S_ISCHR(sb.st_mode)))
    snprintf(err, errlen, "no file to write to");
  else if ((fcntl(fd, F_GETFL) & O_ACCMODE) != O_RDWR) /* its mark is read back */
    snprintf(err, errlen, "the file is not open for reading and writing");
  else
    return 0;
  return -1;
}

/* A snapshot request's window (ns; 0: the whole), in *last_ns: 1 when
 * the line is one. */
static int snapshot_line(const char *line, unsigned long long *last_ns) {
  char verb[16] = "";
  sscanf(line, "%15s", verb);
  return !strcmp(verb, GT_CTL_SNAPSHOT) &&
         sscanf(line, GT_CTL_SNAPSHOT " %llu", last_ns) == 1;
}

/* The request in line (protocol.h), served; err says why not. */
static void serve_line(const char *line, int fd, struct gt_sink *sink,
                       struct gt_output *out, struct gt_snapshot_stats *st, char *err,
                       size_t errlen) {
  unsigned long long last_ns = 0;
  char verb[16] = "";
  sscanf(line, "%15s", verb);
  if (snapshot_line(line, &last_ns)) {
    if (check_file(fd, err, errlen) == 0)
      snapshot(sink, out, fd, "the snapshot", last_ns, st, err, errlen);
    return;
  }
  if (strcmp(verb, GT_CTL_START) && strcmp(verb, GT_CTL_STOP)) {
    snprintf(err, errlen, "not a request this collector knows");
    return;
  }
  int start = !strcmp(verb, GT_CTL_START);
  if (start && check_file(fd, err, errlen) != 0)
    return;
  gt_sink_cut(sink); /* what came before the switch stays on its side */
  while (gt_sink_write_one(sink))
    ;
  if (start && gt_output_start(out, fd, GT_NOTE_STARTED, err, errlen) == 0) {
    gt_collector_say("flight recorder: " GT_NOTE_STARTED);
  } else if (!start && gt_output_stop(out, GT_NOTE_STOPPED, st, err, errlen) == 0) {
    gt_collector_say("flight recorder: " GT_NOTE_STOPPED " (%llu records)",
                     (unsigned long long)st->records);
  }
}

/* A request read from an accepted connection and checked (r->err says why
 * it is refused). */
static void take_request(struct request *r, int conn) {
  struct timeval tv = {1, 0}; /* the requester sends at once */
  setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  struct ucred cred;
  socklen_t clen = sizeof cred;
  r->conn = conn;
  r->fd = -1;
  r->err[0] = '\0';
  r->names.since_ns = 0;
  if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 ||
      cred.uid != geteuid())
    snprintf(r->err, sizeof r->err, "refused: not the collector's user");
  else if (read_request(conn, r->line, sizeof r->line, &r->fd) <= 0)
    snprintf(r->err, sizeof r->err, "not a request this collector knows");
}

/* The request's reply sent, its connection and descriptor closed. */
static void answer(struct request *r, const struct gt_snapshot_stats *st) {
  char reply[GT_CTL_LINE_MAX];
  int n = r->err[0]
              ? snprintf(reply, sizeof reply, "error %s\n", r->err)
              : snprintf(reply, sizeof reply, "ok %llu %llu %llu %llu\n",
                         (unsigned long long)st->records, (unsigned long long)st->bytes,
                         (unsigned long long)st->segments,
                         (unsigned long long)(st->to_ns - st->from_ns));
  ssize_t ignored = send(r->conn, reply, (size_t)n, MSG_NOSIGNAL);
  (void)ignored;
  if (r->fd >= 0)
    close(r->fd);
  close(r->conn);
  r->conn = -1;
}

/* A request served (unless refused) and answered. */
static void serve_request(struct request *r, struct gt_sink *sink,
                          struct gt_output *out) {
  struct gt_snapshot_stats st = {0};
  if (!r->err[0])
    serve_line(r->line, r->fd, sink, out, &st, r->err, sizeof r->err);
  answer(r, &st);
}

/* SIGUSR2 (why "snapshot") or a trigger ("oom", "alert", "signal"): a
 * snapshot to BASE.WHY-N.gtrace, said on stderr after `cause`. */
static void snapshot_beside(struct gt_control *c, struct gt_sink *sink,
                            struct gt_output *out, const char *why, const char *cause) {
  char prefix[4200], path[4300], err[600];
  snprintf(prefix, sizeof prefix, "%s.%s-", c->base, why);
  int fd = gt_out_pick(prefix, 1, ".gtrace", path, sizeof path, err, sizeof err);
  struct gt_snapshot_stats st;
  if (fd >= 0 && snapshot(sink, out, fd, path, 0, &st, err, sizeof err) == 0)
    gt_collector_say("flight recorder: %s%llu records of the last %.1f s written to %s",
                     cause, (unsigned long long)st.records,
                     (double)(st.to_ns - st.from_ns) / 1e9, path);
  else
    gt_collector_say("flight recorder: no snapshot: %s", err);
  if (fd >= 0)
    close(fd);
}

/* A snapshot waits from now for the stacks taken so far. */
static void wait_from(struct names_wait *w, uint64_t now_ns,
                      const struct gt_symq *names) {
  w->since_ns = now_ns;
  w->upto = gt_symq_pushed(names);
}

/* A snapshot pending (since now, when none waited): 1 when it is to be
 * written, once the symbolizer has named the stacks taken before it was
 * asked for, or after NAMES_WAIT_NS (w cleared then), so that its stacks
 * have their lines: a stack first seen just before the snapshot is the
 * likeliest to be the one asked about. Stacks that come later are not
 * waited for: a server's new stacks never all have names. */
static int names_ready(struct names_wait *w, uint64_t now_ns,
                       const struct gt_symq *names) {
  if (!w->since_ns)
    wait_from(w, now_ns, names);
  if (!gt_symq_done(names, w->upto) && now_ns - w->since_ns < NAMES_WAIT_NS)
    return 0;
  w->since_ns = 0;
  return 1;
}

void gt_control_observe(struct gt_control *c, const struct gt_record *rec) {
  if (c && gt_record_out_of_memory(rec))
    c->oom_seen = 1;
}

/* The out-of-memory trigger: a failure seen starts a pending snapshot (none
 * within OOM_INTERVAL_NS of the last), written once the names are in. */
static void serve_trigger(struct gt_control *c, struct gt_sink *sink,
                          struct gt_output *out, uint64_t now_ns,
                          const struct gt_symq *names) {
  if (c->oom_seen && !c->oom.since_ns &&
      (!c->oom_last_ns || now_ns - c->oom_last_ns >= OOM_INTERVAL_NS))
    wait_from(&c->oom, now_ns, names);
  c->oom_seen = 0;
  if (!c->oom.since_ns || !names_ready(&c->oom, now_ns, names))
    return;
  snapshot_beside(c, sink, out, "oom", "an allocation ran out of memory: ");
  c->oom_last_ns = now_ns;
}

/* The webhook's requests: one snapshot once the names are in, none within
 * ALERT_INTERVAL_NS of the last; those that come while one is pending join
 * it. */
static void serve_alerts(struct gt_control *c, unsigned alerted, struct gt_sink *sink,
                         struct gt_output *out, uint64_t now_ns,
                         const struct gt_symq *names) {
  if (alerted && c->alert.since_ns) {
    c->alerts_joined += alerted;
  } else if (alerted && c->alert_last_ns &&
             now_ns - c->alert_last_ns < ALERT_INTERVAL_NS) {
    gt_collector_say("flight recorder: POST /snapshot: %u request%s coalesced into the "
                     "snapshot of %.1f s ago",
                     alerted, alerted == 1 ? "" : "s",
                     (double)(now_ns - c->alert_last_ns) / 1e9);
  } else if (alerted) {
    wait_from(&c->alert, now_ns, names);
    c->alerts_joined = alerted - 1;
  }
  if (!c->alert.since_ns || !names_ready(&c->alert, now_ns, names))
    return;
  snapshot_beside(c, sink, out, "alert", "POST /snapshot: ");
  if (c->alerts_joined)
    gt_collector_say("flight recorder: POST /snapshot: %u request%s coalesced into that "
                     "snapshot",
                     c->alerts_joined, c->alerts_joined == 1 ? "" : "s");
  c->alert_last_ns = now_ns;
}

/* Signals that end a program on purpose (a person's ^C, a stop, the
 * terminal gone): no snapshot. Any other death by a signal is a crash
 * (SIGSEGV, SIGABRT, SIGBUS, ...) or a kill (SIGKILL: the kernel's OOM
 * killer, a container's memory limit). */
static int deliberate(int sig) {
  return sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
}

void gt_control_died(struct gt_control *c, int sig, uint32_t pid) {
  if (!c || pid == c->settled_pid)
    return;
  if (c->died && c->died_pid == pid) { /* told twice: the better word */
    if (deliberate(sig)) {
      c->died = 0;
      c->settled_pid = pid;
    } else if (sig) {
      c->died_sig = sig;
    }
    return;
  }
  if (deliberate(sig)) {
    c->settled_pid = pid;
    return;
  }
  c->died = 1;
  c->died_sig = sig;
  c->died_pid = pid;
  c->death.since_ns = 0;
}

int gt_control_pending(const struct gt_control *c) {
  return c && (c->died || c->asked.since_ns || c->oom.since_ns || c->alert.since_ns ||
               c->held.conn >= 0);
}

/* A death: once the names are in, as the OOM trigger's. */
static void serve_death(struct gt_control *c, struct gt_sink *sink, struct gt_output *out,
                        uint64_t now_ns, const struct gt_symq *names) {
  if (!c->death.since_ns)
    wait_from(&c->death, now_ns, names);
  if ((!c->died_sig && now_ns - c->death.since_ns < DEATH_WORD_NS) ||
      !names_ready(&c->death, now_ns, names))
    return;
  c->died = 0;
  c->settled_pid = c->died_pid;
  char cause[200];
  if (c->died_sig)
    snprintf(cause, sizeof cause, "pid %u died of signal %d (%s)", c->died_pid,
             c->died_sig, strsignal(c->died_sig));
  else
    snprintf(cause, sizeof cause,
             "pid %u was killed (it ended without exit() or _exit(); its signal was not "
             "seen: its parent reaped it first)",
             c->died_pid);
  if (c->death_last_ns && now_ns - c->death_last_ns < OOM_INTERVAL_NS) {
    gt_collector_say("flight recorder: %s: coalesced into the snapshot of %.1f s ago",
                     cause, (double)(now_ns - c->death_last_ns) / 1e9);
    return;
  }
  strcat(cause, ": ");
  snapshot_beside(c, sink, out, "signal", cause);
  c->death_last_ns = now_ns;
}

/* A request that writes out what came before it, and so waits for its
 * names: a snapshot, and a stop (the names of the stacks its file holds;
 * a start's come after it, into its file). */
static int waits_for_names(const char *line) {
  unsigned long long last_ns;
  char verb[16] = "";
  sscanf(line, "%15s", verb);
  return snapshot_line(line, &last_ns) || !strcmp(verb, GT_CTL_STOP);
}

/* The socket's requests, one at a time: a snapshot or a stop waits for
 * names (the requests after it wait in the listening socket's backlog). */
static void serve_requests(struct gt_control *c, struct gt_sink *sink,
                           struct gt_output *out, uint64_t now_ns,
                           const struct gt_symq *names) {
  if (c->held.conn >= 0) {
    if (!names_ready(&c->held.names, now_ns, names))
      return;
    serve_request(&c->held, sink, out);
  }
  if (now_ns - c->polled_ns < POLL_EVERY_NS)
    return;
  c->polled_ns = now_ns;
  int conn;
  while ((conn = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
    take_request(&c->held, conn);
    if (!c->held.err[0] && waits_for_names(c->held.line) &&
        !names_ready(&c->held.names, now_ns, names))
      return;
    serve_request(&c->held, sink, out);
  }
}

void gt_control_serve(struct gt_control *c, int signalled, unsigned alerted,
                      struct gt_sink *sink, struct gt_output *out, uint64_t now_ns,
                      const struct gt_symq *names) {
  if (!c) {
    if (signalled)
      gt_collector_say("SIGUSR2: no flight recorder here (--flight-recorder SIZE)");
    return;
  }
  if ((signalled || c->asked.since_ns) && names_ready(&c->asked, now_ns, names))
    snapshot_beside(c, sink, out, "snapshot", "");
  serve_alerts(c, alerted, sink, out, now_ns, names);
  if (c->died)
    serve_death(c, sink, out, now_ns, names);
  serve_trigger(c, sink, out, now_ns, names);
  serve_requests(c, sink, out, now_ns, names);
}
