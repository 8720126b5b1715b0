/* clients.c — one traced process: handshake, draining, its end.
 * See collector.h; nothing read from the process is trusted. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"
#include "gputrace/protocol.h"
#include "gputrace/trace_file.h"

#define GT_STALL_NS 2000000000ull /* a live writer this late is presumed stuck */

struct gt_client {
  int fd;
  uint32_t pid;
  void *map;
  size_t map_len;
  struct gt_ring ring;
  uint64_t last_dropped[GT_KIND_COUNT];
  uint64_t dropped;
  uint64_t records;
  uint64_t pending_since;
  uint64_t abandoned_after_hangup;
  int hung_up;
  int drained;
  int tsc; /* the ring's records count TSC ticks */
  struct gt_symbolizer *sym;
};

int gt_collector_quiet;

uint64_t gt_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void note(const char *fmt, const char *what, unsigned pid) {
  if (!gt_collector_quiet) {
    fprintf(stderr, fmt, what, pid);
    fputc('\n', stderr);
  }
}

/* Receive the hello and the memfd. Returns the fd or -1. */
static int recv_hello(int fd, struct gt_hello *hello) {
  char ctrl[CMSG_SPACE(4 * sizeof(int))];
  struct iovec iov = {.iov_base = hello, .iov_len = sizeof *hello};
  struct msghdr msg = {.msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = ctrl,
                       .msg_controllen = sizeof ctrl};
  ssize_t n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
  int memfd = -1;
  for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
    if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
      continue;
    size_t nfds = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < nfds; i++) {
      int got;
      memcpy(&got, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
      if (memfd < 0)
        memfd = got;
      else
        close(got); /* more fds than the protocol has: not ours to keep */
    }
  }
  if (n != (ssize_t)sizeof *hello || hello->magic != GT_HELLO_MAGIC ||
      hello->version != GT_PROTOCOL_VERSION || (msg.msg_flags & MSG_CTRUNC)) {
    if (memfd >= 0)
      close(memfd);
    return -1;
  }
  return memfd;
}

/* Map the ring after checking that it cannot shrink under us. */
static int map_ring(struct gt_client *c, int memfd, const struct gt_hello *hello) {
  struct stat st;
  int seals = fcntl(memfd, F_GET_SEALS);
  if (fstat(memfd, &st) != 0 || seals < 0 || !(seals & F_SEAL_SHRINK) ||
      (uint64_t)st.st_size != hello->ring_bytes || st.st_size < 4096 ||
      (uint64_t)st.st_size > (64ull << 30))
    return -1;
  c->map_len = (size_t)st.st_size;
  /* MAP_POPULATE: take the page faults now, not one per 4 KiB mid-burst. */
  c->map =
      mmap(NULL, c->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, memfd, 0);
  if (c->map == MAP_FAILED) {
    c->map = NULL;
    return -1;
  }
  if (gt_ring_attach(&c->ring, c->map, c->map_len) != 0)
    return -1;
  c->tsc = c->ring.hdr->clock == GT_CLOCK_TSC;
  return 0;
}

static void put_process_start(struct gt_sink *sink, const struct gt_client *c,
                              const struct gt_hello *hello) {
  struct gt_record buf[GT_MAX_SLOTS];
  memset(buf, 0, sizeof buf[0]);
  buf[0].ts_ns = hello->start_ns;
  buf[0].pid = buf[0].tid = c->pid;
  buf[0].api = GT_API_gputrace_process;
  buf[0].kind = GT_KIND_PROCESS;
  buf[0].u.proc.ppid = hello->ppid;
  buf[0].u.proc.phase = GT_PROC_START;
  buf[0].u.proc.ring_bytes = c->map_len;
  size_t len = hello->cmdline_len < GT_CMDLINE_MAX ? hello->cmdline_len : GT_CMDLINE_MAX;
  gt_record_attach_text(&buf[0], hello->cmdline, strnlen(hello->cmdline, len));
  gt_sink_put(sink, &buf[0]);
}

static void free_client(struct gt_client *c) {
  gt_sym_free(c->sym);
  if (c->map)
    munmap(c->map, c->map_len);
  close(c->fd);
  free(c);
}

struct gt_client *gt_client_accept(int listen_fd, struct gt_sink *sink) {
  int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
  if (fd < 0)
    return NULL;
  struct gt_client *c = calloc(1, sizeof *c);
  if (!c) {
    close(fd);
    return NULL;
  }
  c->fd = fd;
  struct timeval tv = {.tv_sec = 2};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  struct ucred cred;
  socklen_t len = sizeof cred;
  struct gt_hello hello;
  int memfd = -1;
  const char *why = NULL;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != geteuid())
    why = "refused a process of another user";
  else if ((memfd = recv_hello(fd, &hello)) < 0)
    why = "refused a malformed handshake";
  else if ((c->pid = (uint32_t)cred.pid, map_ring(c, memfd, &hello)) != 0)
    why = "refused an invalid ring";
  if (memfd >= 0)
    close(memfd);
  char ack = why ? GT_ACK_REFUSED : GT_ACK_OK;
  if (send(fd, &ack, 1, MSG_NOSIGNAL) != 1 && !why)
    why = "lost a process during the handshake";
  if (why) {
    note("gputrace-collector: %s (pid %u)", why, (unsigned)cred.pid);
    free_client(c);
    return NULL;
  }
  put_process_start(sink, c, &hello);
  c->sym = gt_sym_new();
  return c;
}

int gt_client_fd(const struct gt_client *c) {
  return c->fd;
}

unsigned gt_client_fill_pct(const struct gt_client *c) {
  uint64_t used = gt_ring_used(&c->ring), cap = c->ring.mask + 1;
  return used >= cap ? 100u : (unsigned)(used * 100 / cap); /* head is untrusted */
}
uint32_t gt_client_pid(const struct gt_client *c) {
  return c->pid;
}
void gt_client_hangup(struct gt_client *c) {
  c->hung_up = 1;
}
int gt_client_done(const struct gt_client *c) {
  return c->hung_up && c->drained;
}

static void put_count(struct gt_sink *sink, const struct gt_client *c, unsigned api,
                      unsigned of_kind, uint64_t count, uint64_t now_ns) {
  struct gt_record rec;
  memset(&rec, 0, sizeof rec);
  rec.ts_ns = now_ns;
  rec.pid = rec.tid = c->pid;
  rec.api = (uint16_t)api;
  rec.kind = (uint8_t)gt_api_kind(api);
  rec.nslots = 1;
  rec.u.count.count = count;
  rec.u.count.of_kind = of_kind;
  gt_sink_put(sink, &rec);
}

static void account_drops(struct gt_client *c, struct gt_sink *sink, uint64_t now_ns) {
  for (unsigned k = 0; k < GT_KIND_COUNT; k++) {
    uint64_t d = atomic_load_explicit(&c->ring.hdr->dropped[k], memory_order_relaxed);
    if (d <= c->last_dropped[k])
      continue; /* counters only grow; anything else is ignored */
    put_count(sink, c, GT_API_gputrace_drop, k, d - c->last_dropped[k], now_ns);
    c->dropped += d - c->last_dropped[k];
    c->last_dropped[k] = d;
  }
}

/* The tail is reserved but not committed: wait, or give up on it. */
static int handle_pending(struct gt_client *c, uint64_t now_ns) {
  uint64_t cap = c->ring.mask + 1;
  if (c->hung_up) {
    /* The writer is gone for good. Bound the work against a bogus head. */
    if (c->abandoned_after_hangup++ >= cap || !gt_ring_abandon(&c->ring)) {
      c->drained = 1;
      return 0;
    }
    return 1;
  }
  if (c->pending_since == 0) {
    c->pending_since = now_ns;
    return 0;
  }
  if (now_ns - c->pending_since < GT_STALL_NS)
    return 0;
  c->pending_since = 0;
  return gt_ring_abandon(&c->ring) ? 1 : 0;
}

/* Stacks and modules feed the symbolizer; the record is committed first so
 * its FRAME records follow it. */
static void symbols_of(struct gt_client *c, const struct gt_record *rec,
                       struct gt_sink *sink) {
  struct gt_record copy[GT_MAX_SLOTS];
  memcpy(copy, rec, (size_t)rec->nslots * GT_SLOT_SIZE);
  gt_sink_commit(sink);
  if (copy[0].kind == GT_KIND_STACK) {
    gt_sym_stack(c->sym, &copy[0], c->pid, sink);
  } else {
    char path[GT_TEXT_MAX + 1];
    gt_record_text(&copy[0], copy[0].u.module.text_len, path, sizeof path);
    gt_sym_add_module(c->sym, path, copy[0].u.module.bias);
  }
}

unsigned gt_client_drain(struct gt_client *c, struct gt_sink *sink, unsigned budget,
                         uint64_t now_ns) {
  unsigned n = 0;
  while (n < budget && gt_sink_has_room(sink)) {
    struct gt_record *rec = gt_sink_space(sink); /* read straight into the chunk */
    enum gt_ring_status st = gt_ring_read(&c->ring, rec);
    if (st == GT_RING_RECORD) {
      rec->pid = c->pid; /* the connection, not the ring, says who wrote it */
      /* DEVICE records are made off the hot path from CLOCK_MONOTONIC
       * (preload/devtime_resolve.c): their times are ns in every ring. */
      if (c->tsc && rec->kind != GT_KIND_DEVICE) {
        rec->ts_ns = gt_tsc_to_ns(rec->ts_ns);
        rec->dur_ns = gt_tsc_span_ns(rec->dur_ns);
      }
      if (rec->kind == GT_KIND_STACK || rec->kind == GT_KIND_MODULE)
        symbols_of(c, rec, sink); /* commits it */
      else
        gt_sink_commit(sink);
      c->records++;
      c->pending_since = 0;
      n++;
      continue;
    }
    if (st == GT_RING_EMPTY) {
      c->pending_since = 0;
      if (c->hung_up)
        c->drained = 1;
      break;
    }
    if (!handle_pending(c, now_ns))
      break;
  }
  account_drops(c, sink, now_ns);
  return n;
}

void gt_client_finish(struct gt_client *c, struct gt_sink *sink, uint64_t now_ns) {
  account_drops(c, sink, now_ns);
  if (c->ring.lost)
    put_count(sink, c, GT_API_gputrace_lost, GT_KIND_NONE, c->ring.lost, now_ns);
  struct gt_record rec;
  memset(&rec, 0, sizeof rec);
  rec.ts_ns = now_ns;
  rec.pid = rec.tid = c->pid;
  rec.api = GT_API_gputrace_process;
  rec.kind = GT_KIND_PROCESS;
  rec.nslots = 1;
  rec.u.proc.phase = GT_PROC_END;
  rec.u.proc.ring_bytes = c->map_len;
  rec.u.proc.records = c->records;
  rec.u.proc.dropped = c->dropped;
  rec.u.proc.lost = c->ring.lost;
  rec.u.proc.exited = atomic_load(&c->ring.hdr->exited) != 0;
  gt_sink_put(sink, &rec);
  if (c->dropped || c->ring.lost) {
    /* DEVICE drops also count device work the shim could not time. */
    uint64_t device = c->last_dropped[GT_KIND_DEVICE];
    char what[128];
    snprintf(what, sizeof what,
             "%llu records dropped (ring full), %llu device times missing, %llu lost",
             (unsigned long long)(c->dropped - device), (unsigned long long)device,
             (unsigned long long)c->ring.lost);
    note("gputrace-collector: %s in pid %u", what, c->pid);
  }
  free_client(c);
}
