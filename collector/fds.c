/* fds.c — the collector's file descriptors (see collector.h).
 *
 * Every traced process costs the collector two descriptors (its connection
 * and its pidfd) and a third for a moment (its ring's memfd, until mapped).
 * So at start the soft RLIMIT_NOFILE is raised to the hard one (the
 * default soft limit of 1024 is 500 processes). Past the hard one the
 * collector backs off instead of spinning: a failed accept or a handshake
 * with no descriptor for its memfd starts a shortage, during which the
 * listening socket is not polled and waiting handshakes are not tried,
 * until a descriptor frees (gt_fds_freed: a client closed its own) or
 * GT_FDS_RETRY_NS passes (ENFILE is the whole machine's; files the
 * symbolizer closes are not announced). A reserve descriptor, given up when
 * accept finds none, lets one more connection in, so a process waiting in
 * the listen backlog is answered (GT_ACK_NO_FDS, clients.c) rather than
 * left to time out; it is taken back before any handshake may use a freed
 * descriptor. The first shortage is logged; what it cost (processes
 * that waited and were traced, processes told and untraced) is counted for
 * the summary NOTE (main.c).
 *
 * Single-threaded: the drain loop's only. */
#include <errno.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "collector.h"

#define GT_FDS_RETRY_NS 100000000ull /* 100 ms */

static int g_reserve = -1;
static unsigned long g_limit;
static int g_short;           /* in a shortage: do not poll, do not try */
static int g_freed;           /* a descriptor freed since the last failure */
static uint64_t g_retry_ns;   /* when to try again anyway */
static uint64_t g_last_short; /* when a descriptor was last missing (0: never) */
static uint64_t g_waited, g_told;

/* A descriptor that needs no file system (a chroot may lack /dev/null). */
static int open_reserve(void) {
  return eventfd(0, EFD_CLOEXEC);
}

/* The most the kernel lets a process have when the hard limit is unlimited. */
static rlim_t nr_open(void) {
  unsigned long n = 0;
  FILE *f = fopen("/proc/sys/fs/nr_open", "re");
  if (f && fscanf(f, "%lu", &n) != 1)
    n = 0;
  if (f)
    fclose(f);
  return n ? (rlim_t)n : 1048576;
}

unsigned long gt_fds_start(void) {
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0) {
    rlim_t want = lim.rlim_max == RLIM_INFINITY ? nr_open() : lim.rlim_max;
    if (lim.rlim_cur < want) {
      struct rlimit raised = {want, lim.rlim_max};
      if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
        lim.rlim_cur = want;
    }
    g_limit = lim.rlim_cur == RLIM_INFINITY ? 0 : (unsigned long)lim.rlim_cur;
  }
  g_reserve = open_reserve();
  return g_limit;
}

unsigned long gt_fds_limit(void) {
  return g_limit;
}

void gt_fds_short(uint64_t now_ns) {
  if (!g_last_short)
    gt_collector_say("out of file descriptors (limit %lu, 2 per traced process): new "
                     "processes wait for one, and run untraced after 3 s",
                     g_limit);
  g_short = 1;
  g_freed = 0;
  g_retry_ns = now_ns + GT_FDS_RETRY_NS;
  g_last_short = now_ns;
}

int gt_fds_starved(void) {
  return g_short;
}

uint64_t gt_fds_last_short(void) {
  return g_last_short;
}

int gt_fds_retry(uint64_t now_ns) {
  return !g_short || g_freed || now_ns >= g_retry_ns;
}

void gt_fds_freed(void) {
  g_freed = 1;
}

void gt_fds_ok(void) {
  g_short = 0;
}

/* The reserve comes first: were a freed descriptor taken by a handshake
 * while the reserve is spent, no connection could be let in to be told,
 * and the backlog would wait until its shims give up. */
int gt_fds_room(uint64_t now_ns) {
  if (!gt_fds_retry(now_ns))
    return 0;
  if (g_reserve < 0)
    g_reserve = open_reserve();
  int probe = g_reserve >= 0 ? open_reserve() : -1;
  /* Other errors: no eventfd here; the handshake finds out for itself. */
  if (probe < 0 && (errno == EMFILE || errno == ENFILE)) {
    gt_fds_short(now_ns);
    return 0;
  }
  if (probe >= 0)
    close(probe);
  gt_fds_ok();
  return 1;
}

int gt_fds_use_reserve(void) {
  if (g_reserve < 0)
    return 0;
  close(g_reserve);
  g_reserve = -1;
  return 1;
}

void gt_fds_refill(void) {
  if (g_reserve < 0)
    g_reserve = open_reserve();
}

void gt_fds_count(int traced) {
  if (traced)
    g_waited++;
  else
    g_told++;
}

uint64_t gt_fds_waited(void) {
  return g_waited;
}

uint64_t gt_fds_told(void) {
  return g_told;
}
