/* clients.c — one traced process: handshake, draining, its end.
 * See collector.h; nothing read from the process is trusted.
 *
 * A process is known by the pid SO_PEERCRED gives, in our pid namespace: one
 * in a namespace we cannot see (0: a pod's container without a shared
 * process namespace) is refused, as it could be told from no other.
 *
 * A connection starts in the handshake: non-blocking, served from the poll
 * loop, so a client that connects and says nothing costs the others
 * nothing; one silent past GT_HANDSHAKE_NS is refused. Every refused or
 * failed handshake (a client that gave up waiting included) leaves a NOTE
 * flagged GT_F_UNTRACED naming the process, so the trace says who went
 * untraced. A ring is mapped
 * only within GT_RING_MAX_BYTES and never faulted in here. A hello whose
 * memfd finds no descriptor free (fds.c) waits for one, unpolled, up to
 * GT_FDS_TELL_NS, then is answered GT_ACK_NO_FDS, so its shim names the
 * cause; a live process's descriptors are closed as soon as its end is
 * known.
 *
 * The end of a process is told by the process, not by its socket: a
 * program may close every descriptor it did not open (daemons do), which
 * closes the shim's socket while the process goes on writing its ring. So
 * when the socket closes the client is kept and drained while its pidfd says
 * the process lives and its /proc/PID/maps still holds the ring's memfd
 * (after an exec it does not). A newer connection from the same pid (an
 * exec'd image that is traced again) also ends it (collector/main.c).
 *
 * A process may scribble on its own ring: times, drop counters and heads
 * are bounded (GT_TIME_MARGIN_NS, GT_DROPS_PER_NS, the ring's slots); what
 * passes a bound is dropped or ignored, and a NOTE flagged incomplete names
 * the process after its end, so every reader warns about it.
 *
 * A hello of another contract (protocol.h: its protocol, ring version,
 * kinds or APIs are not this collector's, gt_collector_contract) is
 * answered GT_ACK_CONTRACT and its ring never mapped: a ring laid out or
 * numbered otherwise would be misread, not refused. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"
#include "gputrace/map.h"
#include "gputrace/paths.h"
#include "gputrace/protocol.h"
#include "gputrace/trace_file.h"
#include "util.h" /* gt_text_clean */

#define GT_STALL_NS 2000000000ull     /* a live writer this late is presumed stuck */
#define GT_HANDSHAKE_NS 5000000000ull /* the shim waits 5 s for its answer */
/* Out of descriptors, a hello waits this long for one, then is told why
 * (GT_ACK_NO_FDS) while its shim still listens. */
#define GT_FDS_TELL_NS 3000000000ull
#define GT_MAPS_CHECK_NS 1000000000ull
#define GT_SYMBOLS_WAIT_NS 5000000000ull
/* Bounds on what a process's ring says (it may have scribbled on it): a
 * time within its run (from its ring's creation, or its handshake if that
 * says later, to the drain) give or take GT_TIME_MARGIN_NS; drop counters
 * that grew at most GT_DROPS_PER_NS a ns since then (a hook costs tens of
 * ns a thread). Past them, what it says is ignored and its data marked
 * damaged. */
#define GT_TIME_MARGIN_NS 10000000000ull
#define GT_DROPS_PER_NS 16u

struct gt_client {
  int fd;    /* the connection; -1 once it closed */
  int pidfd; /* -1 without pidfd_open: then the socket's EOF ends the process */
  int live;  /* the handshake is done */
  uint64_t deadline_ns; /* handshake */
  int fds_wait;         /* its hello came with no descriptor free for its memfd */
  uint64_t tell_ns;     /* then: when to answer GT_ACK_NO_FDS */
  uint32_t pid;
  uint32_t uid;
  void *map;
  size_t map_len;
  dev_t ring_dev; /* the memfd, to find it in /proc/PID/maps */
  ino_t ring_ino;
  struct gt_ring ring;
  uint64_t last_dropped[GT_KIND_COUNT];
  uint64_t dropped;
  uint64_t records;
  uint64_t pending_since;
  uint64_t abandoned_after_hangup;
  uint64_t next_maps_check_ns;
  uint64_t drained_ns; /* when it was hung up and drained */
  uint64_t ended_ns;   /* when its end (exit, exec) was noticed: its END's time */
  int hung_up;
  int drained;
  int tsc; /* the ring's records count TSC ticks */
  struct gt_symq *symq;
  uint64_t sym_seq; /* the last item it gave the symbolizer */
  struct gt_knames *knames;
  int looking;       /* inside a look-ahead for a kernel's name */
  unsigned parked_n; /* records the look-ahead set aside (name_first) */
  struct gt_record parked[GT_RING_NSUB_MAX + 1]; /* at most one a source */
  struct gt_map host_fns; /* host functions given to the symbolizer */
  uint64_t begin_ns;      /* the earliest time its records may have (less the margin) */
  uint64_t now_ns;        /* the drain's: the latest (plus the margin) */
  uint64_t bad_times;     /* records with a time outside its run, dropped */
  int bad_counters;       /* drop counters out of bounds, ignored */
  int death;              /* its end: -1 not a death, else the signal (0: not seen) */
};

static void note(const char *what, unsigned pid) {
  gt_collector_say("%s (pid %u)", what, pid);
}

/* A hello of ours (magic) whose contract is not this collector's: another
 * protocol version (its size may differ: only the version at its offset
 * is read), or this version from a shim of other kinds, APIs or ring. */
static int contract_differs(const struct gt_hello *hello, ssize_t n) {
  struct gt_contract ours = gt_collector_contract();
  if (n < (ssize_t)(offsetof(struct gt_hello, contract) +
                    sizeof hello->contract.protocol) ||
      hello->magic != GT_HELLO_MAGIC)
    return 0;
  if (hello->contract.protocol != ours.protocol)
    return 1;
  return n == (ssize_t)sizeof *hello && !gt_contract_equal(&hello->contract, &ours);
}

/* Receive the hello and the memfd without waiting. Returns the fd, -1 for
 * a bad hello, -2 when nothing has arrived yet, -3 when the memfd came but
 * no descriptor was free to receive it (the kernel truncates the control
 * data it cannot install: MSG_CTRUNC with none received), -4 for a hello
 * of another contract (*theirs: what it says of it; protocol 1 says only
 * its version). */
static int recv_hello(int fd, struct gt_hello *hello, struct gt_contract *theirs) {
  char ctrl[CMSG_SPACE(4 * sizeof(int))];
  struct iovec iov = {.iov_base = hello, .iov_len = sizeof *hello};
  struct msghdr msg = {.msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = ctrl,
                       .msg_controllen = sizeof ctrl};
  ssize_t n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    return -2;
  int memfd = -1;
  for (struct cmsghdr *cm = n >= 0 ? CMSG_FIRSTHDR(&msg) : NULL; cm;
       cm = CMSG_NXTHDR(&msg, cm)) {
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
  if (n == (ssize_t)sizeof *hello && memfd < 0 && (msg.msg_flags & MSG_CTRUNC) &&
      msg.msg_controllen == 0)
    return -3;
  memset(theirs, 0, sizeof *theirs);
  if (contract_differs(hello, n)) {
    if (hello->contract.protocol == GT_PROTOCOL_VERSION)
      *theirs = hello->contract;
    else
      theirs->protocol = hello->contract.protocol;
    if (memfd >= 0)
      close(memfd);
    return -4;
  }
  if (n != (ssize_t)sizeof *hello || hello->magic != GT_HELLO_MAGIC ||
      (msg.msg_flags & MSG_CTRUNC)) {
    if (memfd >= 0)
      close(memfd);
    return -1;
  }
  return memfd;
}

/* Map the ring after checking that it cannot shrink under us and is within
 * the size limit. No MAP_POPULATE: the size is the client's to choose, and
 * the shim has already faulted a real ring in (our faults are minor ones,
 * spread over the first lap). 0, or -1 with the reason in why. */
static int map_ring(struct gt_client *c, int memfd, const struct gt_hello *hello,
                    char *why, size_t whylen) {
  struct stat st;
  int seals = fcntl(memfd, F_GET_SEALS);
  snprintf(why, whylen, "refused an invalid ring");
  if (fstat(memfd, &st) != 0 || seals < 0 || !(seals & F_SEAL_SHRINK) ||
      (uint64_t)st.st_size != hello->ring_bytes || st.st_size < 4096)
    return -1;
  if ((uint64_t)st.st_size > GT_RING_MAX_BYTES) {
    snprintf(why, whylen,
             "refused an invalid ring: %" PRIu64 " bytes, larger than the 1 GiB limit",
             (uint64_t)st.st_size);
    return -1;
  }
  c->map_len = (size_t)st.st_size;
  c->ring_dev = st.st_dev;
  c->ring_ino = st.st_ino;
  c->map = mmap(NULL, c->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
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
  buf[0].ts_ns = c->begin_ns; /* hello->start_ns, unless it says after now */
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

/* Close what the client holds open, saying a descriptor freed (fds.c). */
static void close_fds(struct gt_client *c) {
  if (c->fd >= 0 || c->pidfd >= 0)
    gt_fds_freed();
  if (c->fd >= 0)
    close(c->fd);
  if (c->pidfd >= 0)
    close(c->pidfd);
  c->fd = c->pidfd = -1;
}

void gt_client_free(struct gt_client *c) {
  gt_knames_free(c->knames);
  gt_map_free(&c->host_fns);
  if (c->map)
    munmap(c->map, c->map_len);
  close_fds(c);
  free(c);
}

struct gt_client *gt_client_accept(int listen_fd, struct gt_symq *symq, uint64_t now_ns) {
  int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0)
    return NULL;
  struct gt_client *c = calloc(1, sizeof *c);
  if (!c) {
    close(fd);
    errno = ENOMEM;
    return NULL;
  }
  c->fd = fd;
  c->pidfd = -1;
  c->death = -1;
  if ((c->knames = gt_knames_new()) == NULL) {
    close(fd);
    free(c);
    errno = ENOMEM;
    return NULL;
  }
  c->symq = symq;
  c->deadline_ns = now_ns + GT_HANDSHAKE_NS;
  struct ucred cred = {0, (uid_t)-1, (gid_t)-1};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
    cred.uid = (uid_t)-1;
  c->pid = (uint32_t)cred.pid;
  c->uid = (uint32_t)cred.uid;
  return c;
}

/* The process has exited (its pidfd is readable within wait_ms, or
 * without a pidfd, no such process). */
static int process_gone(const struct gt_client *c, int wait_ms) {
  if (c->pidfd < 0)
    return kill((pid_t)c->pid, 0) != 0 && errno == ESRCH;
  struct pollfd p = {.fd = c->pidfd, .events = POLLIN};
  return poll(&p, 1, wait_ms) == 1;
}

/* How a zombie ended (its wait status, /proc/PID/stat's 52nd field), or -1
 * when it is not there to read (its parent reaped it already). */
static int zombie_status(uint32_t pid) {
  char buf[1024];
  if (gt_read_proc(pid, "stat", buf, sizeof buf) <= 0)
    return -1;
  char *p = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
  if (!p || p[1] != ' ' || p[2] != 'Z')
    return -1;
  p += 2; /* field 3, the state */
  for (int field = 3; field < 52 && p; field++)
    p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL;
  return p ? atoi(p) : -1;
}

/* The process is gone: a death when neither exit() nor _exit() marked its
 * ring (the shim's), by the signal its zombie shows if it is still there.
 * A zombie that shows a plain exit (the last thread's pthread_exit, a raw
 * exit_group) is none. */
static void note_death(struct gt_client *c) {
  c->death = -1;
  if (atomic_load(&c->ring.hdr->exited))
    return;
  int status = zombie_status(c->pid);
  if (status < 0)
    c->death = 0;
  else if (WIFSIGNALED(status))
    c->death = WTERMSIG(status);
}

/* Its end is known: stamped now, not when the symbolizer (at nice 19, on a
 * busy machine seconds later) lets gt_client_finish write the END. A live
 * one's descriptors are no longer needed: closed now, for the processes
 * waiting for one (its ring stays mapped until drained). */
static void hang_up(struct gt_client *c, uint64_t now_ns) {
  if (!c->hung_up)
    c->ended_ns = now_ns;
  c->hung_up = 1;
  if (c->live)
    close_fds(c);
}

/* 1 while the process still maps the ring (0 after an exec), or when its
 * maps cannot be read (then only its exit ends it). */
static int ring_mapped(const struct gt_client *c) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%u/maps", c->pid);
  FILE *f = fopen(path, "re");
  if (!f)
    return errno != ENOENT && errno != ESRCH;
  char line[512];
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) {
    unsigned maj, min;
    unsigned long long ino;
    if (sscanf(line, "%*x-%*x %*s %*x %x:%x %llu", &maj, &min, &ino) == 3)
      found = ino == (unsigned long long)c->ring_ino && maj == major(c->ring_dev) &&
              min == minor(c->ring_dev);
    size_t n = strlen(line); /* a line longer than the buffer: skip its rest */
    while (n > 0 && line[n - 1] != '\n' && fgets(line, sizeof line, f))
      n = strlen(line);
  }
  fclose(f);
  return found;
}

/* A handshake that failed leaves a process untraced: say so in the trace
 * (a NOTE flagged GT_F_UNTRACED, which every command shows as a warning
 * without calling the trace damaged: a hostile client cannot fail every
 * command), with
 * its command line (from /proc, else its hello's), made safe for a
 * terminal. A hello sent GT_HANDSHAKE_NS or more ago whose answer could not
 * be given came from a process that gave up waiting: it says so, and why
 * (the collector was out of descriptors meanwhile, or stopped or starved).
 * Processes untraced for want of descriptors are counted (fds.c). */
static void note_untraced(struct gt_sink *sink, const struct gt_client *c,
                          const struct gt_hello *hello, const char *why, int no_fds,
                          uint64_t now_ns) {
  char cmd[256] = "", text[GT_TEXT_MAX];
  ssize_t n = c->pid ? gt_read_proc(c->pid, "cmdline", cmd, sizeof cmd) : -1;
  for (ssize_t i = 0; i < n; i++)
    cmd[i] = cmd[i] ? cmd[i] : ' ';
  if (n <= 0 && hello)
    n = snprintf(cmd, sizeof cmd, "%.*s",
                 (int)(hello->cmdline_len < GT_CMDLINE_MAX ? hello->cmdline_len : 0),
                 hello->cmdline);
  n = n < (ssize_t)sizeof cmd ? n : (ssize_t)sizeof cmd - 1;
  while (n > 0 && cmd[n - 1] == ' ') /* the last argument's NUL */
    n--;
  cmd[n > 0 ? n : 0] = '\0';
  char clean[sizeof cmd];
  gt_text_clean(clean, sizeof clean, cmd);
  int gave_up = hello && hello->start_ns && now_ns - hello->start_ns >= GT_HANDSHAKE_NS;
  no_fds |= gave_up && gt_fds_last_short() >= hello->start_ns;
  snprintf(text, sizeof text, "pid %u%s%s%s ran untraced: %s%s", c->pid,
           clean[0] ? " (" : "", clean, clean[0] ? ")" : "",
           gave_up ? "it gave up waiting 5 s for the collector's answer " : "",
           !gave_up ? why
           : no_fds ? "(the collector was out of file descriptors)"
                    : "(the collector was stopped or starved)");
  gt_sink_note(sink, now_ns, 0, GT_F_UNTRACED, text);
  if (no_fds)
    gt_fds_count(0);
}

/* Traced after waiting for a descriptor: here (wait_for_fds), or in the
 * listen backlog (a shortage since its hello). A NOTE (not a warning:
 * nothing is missing) says which process, and how long its first traced
 * call was held; counted (fds.c). */
static void note_waited(struct gt_sink *sink, const struct gt_client *c,
                        const struct gt_hello *hello, uint64_t now_ns) {
  char text[160];
  uint64_t waited =
      hello->start_ns && hello->start_ns < now_ns ? now_ns - hello->start_ns : 0;
  snprintf(text, sizeof text,
           "pid %u waited %.1f s for one of the collector's file descriptors, then was "
           "traced",
           c->pid, (double)waited / 1e9);
  gt_sink_note(sink, now_ns, c->pid, 0, text);
  gt_fds_count(1);
}

/* Why a process goes untraced for want of descriptors. */
static void no_fds_why(char *why, size_t len) {
  snprintf(why, len,
           "the collector was out of file descriptors (limit %lu, 2 per traced "
           "process)",
           gt_fds_limit());
}

/* 1 when a message (the hello, its memfd attached) waits on the socket;
 * its bytes in *hello. A peek copies no descriptor. */
static int hello_queued(int fd, struct gt_hello *hello) {
  memset(hello, 0, sizeof *hello);
  return recv(fd, hello, sizeof *hello, MSG_PEEK | MSG_DONTWAIT) > 0;
}

/* The answer to a hello: its code and this collector's contract, one
 * message (a protocol 1 shim reads the code alone). 1 sent, else 0. */
static int send_answer(int fd, char ack) {
  struct gt_answer answer = {.ack = (uint8_t)ack, .contract = gt_collector_contract()};
  return send(fd, &answer, sizeof answer, MSG_NOSIGNAL | MSG_DONTWAIT) ==
         (ssize_t)sizeof answer;
}

/* Why a shim of another contract goes untraced. */
static void contract_why(const struct gt_contract *theirs, char *why, size_t len) {
  char a[48], b[48];
  struct gt_contract ours = gt_collector_contract();
  gt_contract_format(theirs, a, sizeof a);
  gt_contract_format(&ours, b, sizeof b);
  snprintf(why, len,
           "refused a shim of contract %s, this collector's %s "
           "(protocol/ring/kinds/APIs)",
           a, b);
}

/* A hello came with no descriptor free for its memfd: wait for one (the
 * socket is not polled meanwhile: gt_client_fd; fds.c says when to try
 * again), up to GT_FDS_TELL_NS after the shim sent it (its start_ns, at
 * most now), then answer GT_ACK_NO_FDS, so its shim says why it runs
 * untraced. 0 waiting, -1 told. */
static int wait_for_fds(struct gt_client *c, const struct gt_hello *hello,
                        struct gt_sink *sink, uint64_t now_ns) {
  if (!c->fds_wait) {
    c->fds_wait = 1;
    uint64_t sent =
        hello->start_ns && hello->start_ns <= now_ns ? hello->start_ns : now_ns;
    c->tell_ns = sent + GT_FDS_TELL_NS;
  }
  if (now_ns < c->tell_ns && !c->hung_up)
    return 0;
  /* Its hello taken off the socket first, the memfd dropped (no control
   * buffer: no descriptor needed): a socket closed with unread data resets
   * the connection, and the shim would see that instead of the answer. */
  struct gt_hello dropped;
  char why[160];
  ssize_t ignored = recv(c->fd, &dropped, sizeof dropped, MSG_DONTWAIT);
  (void)ignored;
  /* One that stopped listening is noted all the same. */
  send_answer(c->fd, GT_ACK_NO_FDS);
  no_fds_why(why, sizeof why);
  note_untraced(sink, c, hello, why, 1, now_ns);
  return -1;
}

/* The handshake: 1 done, 0 waiting, -1 refused (free the client). Its
 * memfd is received only with a descriptor free for it (else the kernel
 * drops it and the process could only be refused): wait_for_fds. */
static int handshake(struct gt_client *c, struct gt_sink *sink, uint64_t now_ns) {
  struct gt_hello hello;
  struct gt_contract theirs;
  char why[200] = "";
  if (hello_queued(c->fd, &hello) && !gt_fds_room(now_ns))
    return wait_for_fds(c, &hello, sink, now_ns);
  int memfd = recv_hello(c->fd, &hello, &theirs);
  if (memfd == -2 && now_ns < c->deadline_ns && !c->hung_up)
    return 0;
  if (memfd == -2)
    snprintf(why, sizeof why, "refused a silent client");
  else if (c->uid != (uint32_t)geteuid())
    snprintf(why, sizeof why, "refused a process of another user");
  else if (c->pid == 0) /* the kernel's answer for a pid namespace we cannot see */
    snprintf(why, sizeof why,
             "refused a process of a pid namespace the collector cannot see "
             "(share one: docs/kubernetes.md)");
  else if (memfd == -3) /* another thread took the free descriptor */
    no_fds_why(why, sizeof why);
  else if (memfd == -4) /* its ring is never mapped: it would be misread */
    contract_why(&theirs, why, sizeof why);
  else if (memfd < 0)
    snprintf(why, sizeof why, "refused a malformed handshake");
  else if (map_ring(c, memfd, &hello, why, sizeof why) == 0)
    why[0] = '\0';
  if (memfd >= 0)
    close(memfd);
  if (!why[0] && c->pid != 0) {
    c->pidfd = (int)syscall(SYS_pidfd_open, (pid_t)c->pid, 0);
    if (c->pidfd < 0 && errno == ESRCH)
      snprintf(why, sizeof why, "lost a process during the handshake");
  }
  char ack = memfd == -3   ? GT_ACK_NO_FDS
             : memfd == -4 ? GT_ACK_CONTRACT
             : why[0]      ? GT_ACK_REFUSED
                           : GT_ACK_OK;
  if (!send_answer(c->fd, ack) && !why[0])
    snprintf(why, sizeof why, "lost a process during the handshake");
  if (why[0]) {
    if (memfd != -3) /* a shortage is logged once (fds.c), not per process */
      note(why, c->pid);
    /* A hello of another protocol is not laid out as ours: none of it read. */
    int ours = memfd >= 0 || memfd == -3 ||
               (memfd == -4 && theirs.protocol == GT_PROTOCOL_VERSION);
    note_untraced(sink, c, ours ? &hello : NULL, why, memfd == -3, now_ns);
    return -1;
  }
  c->live = 1;
  c->begin_ns = hello.start_ns && hello.start_ns < now_ns ? hello.start_ns : now_ns;
  put_process_start(sink, c, &hello);
  if (c->fds_wait || (hello.start_ns && gt_fds_last_short() >= hello.start_ns))
    note_waited(sink, c, &hello, now_ns);
  c->fds_wait = 0; /* its socket polled again */
  return 1;
}

/* The socket closed (or the client sent what the protocol never sends):
 * the process has ended, exec'd, or closed a descriptor it did not open. */
/* A process's descriptors close before it is a zombie, its mappings
 * before them: a closed socket and no ring mapped is an exit under way (or
 * an exec), which its pidfd tells apart within moments. */
#define GT_DYING_WAIT_MS 20

static void socket_closed(struct gt_client *c, uint64_t now_ns) {
  close(c->fd);
  c->fd = -1;
  if (c->pidfd < 0) {
    hang_up(c, now_ns);
  } else if (process_gone(c, 0) || !ring_mapped(c)) {
    if (process_gone(c, GT_DYING_WAIT_MS))
      note_death(c);
    hang_up(c, now_ns);
  }
  c->next_maps_check_ns = now_ns + GT_MAPS_CHECK_NS;
}

int gt_client_event(struct gt_client *c, short sock_revents, short pid_revents,
                    struct gt_sink *sink, uint64_t now_ns) {
  if (!c->live && c->fds_wait) /* not polled: its time to answer, or fds.c's to try */
    return c->hung_up || now_ns >= c->tell_ns || gt_fds_retry(now_ns)
               ? handshake(c, sink, now_ns)
               : 0;
  if (!c->live)
    return c->hung_up || sock_revents || now_ns >= c->deadline_ns
               ? handshake(c, sink, now_ns)
               : 0;
  if (c->hung_up)
    return 0;
  if (pid_revents) { /* exited, even if a child still holds the socket */
    note_death(c);
    hang_up(c, now_ns);
  } else if (c->fd >= 0 && sock_revents)
    socket_closed(c, now_ns);
  else if (c->fd < 0 && now_ns >= c->next_maps_check_ns) {
    if (!ring_mapped(c)) /* an exec without a new connection */
      hang_up(c, now_ns);
    c->next_maps_check_ns = now_ns + GT_MAPS_CHECK_NS;
  }
  return 0;
}

int gt_client_fd(const struct gt_client *c) {
  /* Once its end is known, its EOF would only wake the loop again and again;
   * a hello waiting for a descriptor, its readable socket likewise. */
  return c->hung_up || c->fds_wait ? -1 : c->fd;
}
int gt_client_pidfd(const struct gt_client *c) {
  return c->live && !c->hung_up ? c->pidfd : -1;
}
int gt_client_death(const struct gt_client *c) {
  return c->death;
}
int gt_client_live(const struct gt_client *c) {
  return c->live;
}

unsigned gt_client_fill_pct(const struct gt_client *c) {
  if (!c->live)
    return 0;
  return gt_ring_fill_pct(&c->ring); /* heads are untrusted: clamped */
}
uint32_t gt_client_pid(const struct gt_client *c) {
  return c->pid;
}
void gt_client_hangup(struct gt_client *c, uint64_t now_ns) {
  hang_up(c, now_ns);
}
int gt_client_running(const struct gt_client *c) {
  return c->live && !c->hung_up;
}

int gt_client_done(const struct gt_client *c, uint64_t now_ns) {
  if (!c->live)
    return 0; /* gt_client_event refuses it */
  if (!c->hung_up || !c->drained)
    return 0;
  /* Its frames before its end record, unless the symbolizer is stuck. */
  return gt_symq_done(c->symq, c->sym_seq) ||
         now_ns - c->drained_ns >= GT_SYMBOLS_WAIT_NS;
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
  uint64_t most = (now_ns - c->begin_ns + GT_TIME_MARGIN_NS) * GT_DROPS_PER_NS;
  for (unsigned k = 0; k < GT_KIND_COUNT; k++) {
    uint64_t d = atomic_load_explicit(&c->ring.hdr->dropped[k], memory_order_relaxed);
    if (d < c->last_dropped[k] || d > most)
      c->bad_counters = 1; /* counters only grow, and no faster than calls */
    if (d <= c->last_dropped[k] || d > most)
      continue; /* ignored */
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
      c->drained_ns = now_ns;
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

static void take(struct gt_client *c, struct gt_sink *sink, struct gt_record *rec);

/* A launch refers to a kernel this process never named: the name may sit
 * in another thread's sub-ring (the thread that made the cudaKernel_t or
 * loaded the module, before this launch could happen), not yet drained.
 * Take what the other sources hold, in their order, so the name lands
 * before the launch however deep it sits (no count bound: one would leave
 * it behind a storm's backlog, and the launch unnamed in every reader:
 * e2e/test_late_name.py). Each sub-ring is read up to its head as
 * read once now (a new pass), the shared ring, which a writer may keep
 * filling, up to its capacity; a full sink queue is compressed a chunk at
 * a time to make room. Never the launch's own source, whose later records
 * must stay after it. A source stops at a launch of a kernel not named yet
 * (parked by name_first: the same kernel, from a third thread, whose name
 * may lie in a source read later), so that it follows its name too.
 * Records taken here are drained, not extra work. */
static void look_ahead(struct gt_client *c, struct gt_sink *sink, unsigned self) {
  int eager = c->ring.eager;
  gt_ring_publish(&c->ring); /* a new pass: every head read once more */
  c->ring.eager = 0;
  for (unsigned src = 0; src <= c->ring.nsub; src++) {
    if (src == self)
      continue;
    uint64_t left = src == c->ring.nsub ? c->ring.mask + 1 : UINT64_MAX;
    for (unsigned skipped = 0; left > 0; left--) {
      if (!gt_sink_has_room(sink))
        gt_sink_write_one(sink);
      struct gt_record *rec = gt_sink_space(sink);
      enum gt_ring_status st = gt_ring_read_source(&c->ring, src, rec);
      if (st == GT_RING_SKIPPED && ++skipped < GT_RING_MAX_SKIP)
        continue;
      if (st != GT_RING_RECORD)
        break;
      unsigned parked = c->parked_n;
      take(c, sink, rec);
      if (c->parked_n != parked)
        break; /* this source's next records stay behind the parked one */
    }
  }
  c->ring.eager = eager;
}

static uint64_t kernel_of(const struct gt_record *rec) {
  return rec->kind == GT_KIND_LAUNCH ? rec->u.launch.kernel : rec->u.device.kernel;
}

/* The records a look-ahead parked, each after its kernel's name if one is
 * held now (else unnamed: no source had it). */
static void put_parked(struct gt_client *c, struct gt_sink *sink) {
  for (unsigned i = 0; i < c->parked_n; i++) {
    const struct gt_record *name =
        gt_knames_refer(c->knames, kernel_of(&c->parked[i]), NULL);
    if (name)
      gt_sink_put(sink, name);
    gt_sink_put(sink, &c->parked[i]);
  }
  c->parked_n = 0;
}

/* A launch (or its DEVICE record, one slot, in the sink's space): its
 * kernel's held name goes first. Returns where the record is now (the
 * sink's space again, after the name), or NULL when a look-ahead parked
 * it (its kernel not named yet: put_parked writes it once the look-ahead
 * is done). Graph launches and host functions name an executable or a
 * function that has no KERNEL_NAME: no look-ahead for them (one drained
 * the DEVICE records' source ahead of the launching thread's, whose later
 * kernels' names then came after their DEVICE records). */
static struct gt_record *name_first(struct gt_client *c, struct gt_sink *sink,
                                    struct gt_record *rec) {
  if (rec->flags & (GT_F_GRAPH | GT_F_HOST_FN))
    return rec;
  uint64_t kernel = kernel_of(rec);
  int unknown = 0;
  const struct gt_record *name = gt_knames_refer(c->knames, kernel, &unknown);
  if (!name && !unknown)
    return rec;
  if (unknown && c->looking && rec->nslots == 1 &&
      c->parked_n < sizeof c->parked / sizeof c->parked[0]) {
    c->parked[c->parked_n++] = *rec;
    return NULL;
  }
  struct gt_record saved = *rec;
  if (unknown) {
    if (!c->looking) {
      c->looking = 1;
      look_ahead(c, sink, c->ring.last_src);
      c->looking = 0;
    }
    name = gt_knames_refer(c->knames, kernel, NULL);
  }
  if (name)
    gt_sink_put(sink, name);
  if (!c->looking)
    put_parked(c, sink);
  rec = gt_sink_space(sink);
  *rec = saved;
  return rec;
}

/* A host function's first launch (or node): its address goes to the
 * symbolizer as a one-entry stack of fn + 1 (the symbolizer looks up the
 * byte before a return address: here, the function's own first byte), so
 * a FRAME record names it and readers can show its symbol (symtab.h
 * gt_symtab_function). Bounded: at most 4096 functions a process. */
static void name_host_fn(struct gt_client *c, uint64_t fn) {
  if (!c->symq || fn == 0 || gt_map_get(&c->host_fns, fn, NULL) ||
      c->host_fns.count >= 4096 || gt_map_put(&c->host_fns, fn, 1) != 0)
    return;
  struct {
    struct gt_record rec;
    struct gt_text_slot slot;
  } s;
  memset(&s, 0, sizeof s);
  uint64_t ip = fn + 1;
  s.rec.kind = GT_KIND_STACK;
  s.rec.pid = c->pid;
  s.rec.nslots = 2;
  s.rec.u.stack.depth = 1;
  s.rec.u.stack.text_len = sizeof ip;
  s.slot.magic = GT_TEXT_MAGIC;
  s.slot.index = 1;
  memcpy(s.slot.text, &ip, sizeof ip);
  uint64_t seq = gt_symq_push(c->symq, c->pid, &s.rec);
  c->sym_seq = seq ? seq : c->sym_seq;
}

/* A call's or DEVICE record's time within the process's run (the margin
 * each side), its end too. */
static int time_in_run(const struct gt_client *c, const struct gt_record *rec) {
  if (!gt_kind_is_call(rec->kind) && rec->kind != GT_KIND_DEVICE)
    return 1; /* definitions and the like: their times figure nowhere */
  uint64_t lo = c->begin_ns > GT_TIME_MARGIN_NS ? c->begin_ns - GT_TIME_MARGIN_NS : 0;
  uint64_t hi = c->now_ns + GT_TIME_MARGIN_NS;
  return rec->ts_ns >= lo && rec->ts_ns <= hi && rec->dur_ns <= hi - rec->ts_ns;
}

/* One record read from the ring into the sink's space: fix it up and
 * commit it (or hold it: kernel names; or drop it: a time it cannot have). */
static void take(struct gt_client *c, struct gt_sink *sink, struct gt_record *rec) {
  rec->pid = c->pid; /* the connection, not the ring, says who wrote it */
  /* DEVICE records are made off the hot path from CLOCK_MONOTONIC
   * (preload/devtime_resolve.c): their times are ns in every ring. */
  if (c->tsc && rec->kind != GT_KIND_DEVICE) {
    rec->ts_ns = gt_tsc_to_ns(rec->ts_ns);
    rec->dur_ns = gt_tsc_span_ns(rec->dur_ns);
  }
  if (!time_in_run(c, rec)) {
    c->bad_times++;
    return;
  }
  c->records++;
  if (rec->kind == GT_KIND_KERNEL_NAME && !gt_knames_offer(c->knames, rec))
    return; /* held until a launch refers to it */
  if ((rec->kind == GT_KIND_LAUNCH ||
       (rec->kind == GT_KIND_DEVICE && rec->u.device.of_kind == GT_KIND_LAUNCH)) &&
      (rec = name_first(c, sink, rec)) == NULL)
    return; /* parked by a look-ahead */
  if (rec->kind == GT_KIND_LAUNCH && (rec->flags & GT_F_HOST_FN))
    name_host_fn(c, rec->u.launch.kernel);
  /* Stacks and modules feed the symbolizer, which gets its own copy. */
  if (rec->kind == GT_KIND_STACK || rec->kind == GT_KIND_MODULE) {
    uint64_t seq = gt_symq_push(c->symq, c->pid, rec);
    c->sym_seq = seq ? seq : c->sym_seq;
  }
  gt_sink_commit(sink);
}

unsigned gt_client_drain(struct gt_client *c, struct gt_sink *sink, unsigned budget,
                         uint64_t now_ns) {
  unsigned n = 0;
  if (!c->live || c->drained)
    return 0;
  c->now_ns = now_ns;
  /* While the process runs, a head is re-read once a pass (ring.h); once it
   * is gone, to the end. */
  c->ring.eager = c->hung_up;
  while (n < budget && gt_sink_has_room(sink)) {
    struct gt_record *rec = gt_sink_space(sink); /* read straight into the chunk */
    enum gt_ring_status st = gt_ring_read(&c->ring, rec);
    if (st == GT_RING_RECORD) {
      take(c, sink, rec);
      c->pending_since = 0;
      n++;
      continue;
    }
    if (st == GT_RING_SKIPPED) { /* garbage, counted: let the other rings in */
      n++;
      continue;
    }
    if (st == GT_RING_EMPTY) {
      c->pending_since = 0;
      if (c->hung_up && !c->drained) {
        c->drained = 1;
        c->drained_ns = now_ns;
      }
      break;
    }
    if (!handle_pending(c, now_ns))
      break;
  }
  gt_ring_publish(&c->ring); /* the batch's space back to the producers */
  account_drops(c, sink, now_ns);
  return n;
}

/* A process that scribbled on its ring: what was ignored, in a NOTE that
 * every reader warns about (GT_F_INCOMPLETE: its figures are not whole). */
static void put_damage(const struct gt_client *c, struct gt_sink *sink, uint64_t now_ns) {
  if (!c->bad_times && !c->bad_counters && !c->ring.scribbled)
    return;
  char text[240];
  snprintf(text, sizeof text,
           "process %u wrote garbage into its ring: %llu records with times "
           "outside its run dropped, drop counters %s, %llu impossible "
           "positions skipped; its figures are not whole",
           c->pid, (unsigned long long)c->bad_times,
           c->bad_counters ? "out of bounds ignored" : "sound",
           (unsigned long long)c->ring.scribbled);
  gt_sink_note(sink, c->ended_ns ? c->ended_ns : now_ns, c->pid, GT_F_INCOMPLETE, text);
  gt_collector_say("%s", text);
}

void gt_client_finish(struct gt_client *c, struct gt_sink *sink, uint64_t now_ns) {
  if (!c->live) {
    gt_client_free(c);
    return;
  }
  /* Its frames are in the sink already (gt_client_done waits for them). */
  gt_symq_end(c->symq, c->pid);
  account_drops(c, sink, now_ns);
  if (c->ring.lost)
    put_count(sink, c, GT_API_gputrace_lost, GT_KIND_NONE, c->ring.lost, now_ns);
  struct gt_record rec;
  memset(&rec, 0, sizeof rec);
  rec.ts_ns = c->ended_ns ? c->ended_ns : now_ns;
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
  put_damage(c, sink, now_ns);
  if (c->dropped || c->ring.lost) {
    /* DEVICE drops also count device work the shim could not time; STACK
     * drops, calls past the stack cap; NONE drops, calls the shim let
     * through untraced (while it connected, or in a child process before
     * its first thread took it over: preload/core.c). No ring was full. */
    uint64_t device = c->last_dropped[GT_KIND_DEVICE];
    uint64_t stacks = c->last_dropped[GT_KIND_STACK];
    uint64_t untraced = c->last_dropped[GT_KIND_NONE];
    char what[240];
    int n =
        snprintf(what, sizeof what,
                 "%llu records dropped (ring full), %llu device times missing, %llu lost",
                 (unsigned long long)(c->dropped - device - stacks - untraced),
                 (unsigned long long)device, (unsigned long long)c->ring.lost);
    if (stacks && n > 0 && (size_t)n < sizeof what)
      n += snprintf(what + n, sizeof what - (size_t)n, ", %llu calls past the stack cap",
                    (unsigned long long)stacks);
    if (untraced && n > 0 && (size_t)n < sizeof what)
      snprintf(what + n, sizeof what - (size_t)n, ", %llu calls untraced",
               (unsigned long long)untraced);
    note(what, c->pid);
  }
  gt_client_free(c);
}
