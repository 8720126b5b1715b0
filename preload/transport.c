/* transport.c — see transport.h and include/gputrace/protocol.h.
 *
 * The descriptors the shim keeps are guests among the program's: they are
 * moved high (F_DUPFD_CLOEXEC from GT_FD_FLOOR), where a program that opens
 * files is unlikely to land, and remembered by device and inode. A program
 * may close them (daemons close everything they did not open) and reuse the
 * numbers, so each is checked with fstat before any use or close: a number
 * that no longer holds our socket is never touched again. The collector
 * does not need the socket to go on draining (it watches the process), so a
 * lost socket costs only the shim's check for a vanished collector.
 *
 * Without GPUTRACE_SOCKET, a stand-alone collector found at start-up
 * (pod_collector: GPUTRACE_SOCKET_DIR, docs/kubernetes.md) is the one, and
 * none is started; when none runs there, plain LD_PRELOAD as before. */
#include "transport.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gputrace/knobs.h"
#include "gputrace/paths.h"
#include "gputrace/protocol.h"
#include "shim.h"

#ifndef SYS_close_range /* glibc before 2.34's headers (the bundle's Debian 11 build) */
#define SYS_close_range 436 /* Linux 5.9, the same number on every architecture */
#endif

extern char **environ;

static char g_socket[108];
static char g_output[PATH_MAX];
static char g_collector[PATH_MAX];
static int g_can_spawn; /* plain LD_PRELOAD: we know the output file */
static int g_pod;       /* g_socket is a stand-alone collector's (paths.h) */
/* How a collector this process starts opens the output (collector/main.c):
 * the first process of a run creates it — a name it picked (gputrace-<pid>:
 * another free one when taken), or the user's GPUTRACE_OUTPUT (refused if
 * it exists, unless GPUTRACE_FORCE=1); later ones append, and when the name
 * was picked (GPUTRACE_OUTPUT_PICKED, also for an exec of the process that
 * picked it) pick another if it is not a trace file of ours. */
static const char *g_out_mode = "--append";
static int g_picked;
static int g_sock = -1;
static dev_t g_sock_dev; /* what g_sock was when we made it */
static ino_t g_sock_ino;
static void *g_map;
static size_t g_map_len;

static void locate_collector(void) {
  const char *env = getenv(GT_ENV_COLLECTOR);
  if (env && *env) {
    snprintf(g_collector, sizeof g_collector, "%s", env);
    return;
  }
  Dl_info info;
  if (!dladdr((void *)&locate_collector, &info) || !info.dli_fname)
    return;
  char lib[PATH_MAX];
  snprintf(lib, sizeof lib, "%s", info.dli_fname);
  char *slash = strrchr(lib, '/');
  if (slash)
    *slash = '\0';
  else
    snprintf(lib, sizeof lib, ".");
  snprintf(g_collector, sizeof g_collector, "%.*s/../bin/gputrace-collector",
           (int)(sizeof g_collector - 32), lib);
}

/* Without GPUTRACE_SOCKET: a stand-alone collector (`gputrace collect`)
 * running for GPUTRACE_SOCKET_DIR, or for the socket directory when no
 * GPUTRACE_OUTPUT names a trace of this run's own. 1 with g_socket its
 * socket; nothing goes into the environment (an exec'd child asks again,
 * a forked one keeps g_socket). Asked without connecting (paths.h), so
 * asking costs the collector nothing. */
static int pod_collector(const char *out) {
  char dir[160];
  const char *named = getenv(GT_ENV_SOCKET_DIR);
  if (named && *named) {
    if (strlen(named) >= sizeof dir)
      return 0;
    snprintf(dir, sizeof dir, "%s", named);
  } else if ((out && *out) || gt_socket_dir_name(dir, sizeof dir) != 0) {
    return 0;
  }
  if (gt_pod_socket(dir, g_socket, sizeof g_socket) != 0 ||
      !gt_collector_listens(g_socket)) {
    g_socket[0] = '\0';
    return 0;
  }
  g_pod = 1;
  return 1;
}

void gt_transport_prepare_env(void) {
  char err[256];
  const char *sock = getenv(GT_ENV_SOCKET);
  const char *out = getenv(GT_ENV_OUTPUT);
  if ((!sock || !*sock) && pod_collector(out))
    return; /* it serves us: no output of ours, no collector to start */
  if (!sock || !*sock) {
    char cwd[PATH_MAX / 2];
    if (!getcwd(cwd, sizeof cwd))
      snprintf(cwd, sizeof cwd, "/tmp");
    g_out_mode = gt_knob(GT_KNOB_FORCE) ? "--force" : "--new";
    if (!out || !*out) {
      snprintf(g_output, sizeof g_output, "%s/gputrace-%d.gtrace", cwd, (int)getpid());
      g_out_mode = "--new";
      g_picked = 1;
    } else if (out[0] != '/')
      snprintf(g_output, sizeof g_output, "%s/%s", cwd, out);
    else
      snprintf(g_output, sizeof g_output, "%s", out);
    int rc = gt_socket_for_output(g_output, g_socket, sizeof g_socket, err, sizeof err);
    if (rc < 0) {
      gt_warn("gputrace: %s; running untraced", err);
      return;
    }
    if (rc > 0) /* squatted socket directory: a private one instead */
      gt_warn("gputrace: %s", err);
    setenv(GT_ENV_OUTPUT, g_output, 1);
    setenv(GT_ENV_SOCKET, g_socket, 1);
    if (g_picked)
      setenv(GT_ENV_PICKED, "1", 1);
  } else {
    snprintf(g_socket, sizeof g_socket, "%s", sock);
    if (out && out[0] == '/')
      snprintf(g_output, sizeof g_output, "%s", out);
    const char *picked = getenv(GT_ENV_PICKED);
    g_picked = picked && !strcmp(picked, "1");
  }
  g_can_spawn = g_output[0] != '\0';
  if (g_can_spawn)
    locate_collector();
}

#define GT_FD_FLOOR 900

/* Move `fd` to a high number (close-on-exec), or leave it where it is when
 * the descriptor limit is too low for that. Returns the descriptor to use. */
static int move_high(int fd) {
  struct rlimit lim;
  int floor = GT_FD_FLOOR;
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
      lim.rlim_cur <= (rlim_t)floor + 16)
    floor = lim.rlim_cur > 64 ? (int)(lim.rlim_cur / 2) : fd;
  if (fd >= floor)
    return fd;
  int high = fcntl(fd, F_DUPFD_CLOEXEC, floor);
  if (high < 0)
    return fd;
  close(fd);
  return high;
}

/* 1 while g_sock still is the socket we made. */
static int sock_ours(void) {
  struct stat st;
  return g_sock >= 0 && fstat(g_sock, &st) == 0 && st.st_dev == g_sock_dev &&
         st.st_ino == g_sock_ino;
}

/* A connected socket, or -1 with errno from connect. */
static int connect_once(void) {
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  snprintf(addr.sun_path, sizeof addr.sun_path, "%s", g_socket);
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  fd = move_high(fd);
  if (connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0)
    return fd;
  int saved = errno;
  close(fd);
  errno = saved;
  return -1;
}

/* Build the collector's environment: ours without LD_PRELOAD, tracing off. */
static char **collector_env(void) {
  size_t n = 0;
  while (environ && environ[n])
    n++;
  char **env = calloc(n + 2, sizeof *env);
  if (!env)
    return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 &&
        strncmp(environ[i], GT_ENV_DISABLE "=", sizeof GT_ENV_DISABLE) != 0)
      env[k++] = environ[i];
  env[k++] = GT_ENV_DISABLE "=1";
  return env;
}

/* Start a collector as a detached child that sends no SIGCHLD (clone with
 * exit signal 0), so the traced program's own wait()s never see it.
 * Returns its pid, or -1. */
static long spawn_collector(void) {
  char **env = collector_env();
  if (!env || access(g_collector, X_OK) != 0) {
    free(env);
    errno = ENOENT;
    return -1;
  }
  char *argv[10] = {g_collector, "--socket",         g_socket,     "--output",
                    g_output,    (char *)g_out_mode, "--autospawn"};
  int argc = 7;
  if (g_picked)
    argv[argc++] = "--pick";
  if (gt_knob(GT_KNOB_QUIET))
    argv[argc++] = "--quiet";
  long pid = syscall(SYS_clone, 0 /* no flags, exit signal 0 */, NULL, NULL, NULL, NULL);
  if (pid == 0) {
    setsid();
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, 0);
      dup2(null, 1);
    }
    if (syscall(SYS_close_range, 3u, ~0u, 0) != 0)
      for (int fd = 3; fd < 4096; fd++)
        close(fd);
    execve(g_collector, argv, env);
    _exit(127);
  }
  free(env);
  return pid;
}

/* 1 once the spawned collector has exited (it lost the race for the socket
 * to another one, or could not open the output); reaps it. */
static int collector_exited(long pid) {
  int status;
  return waitpid((pid_t)pid, &status, WNOHANG | __WALL) == (pid_t)pid;
}

/* The collector we started exited without taking us: it said why on
 * stderr, so our message points there instead of at a socket path. */
static int g_spawned_failed;
static long g_spawned_pid = -1; /* the collector this call started, not reaped */

static int spawned_exited(void) {
  if (g_spawned_pid < 0 || !collector_exited(g_spawned_pid))
    return 0;
  g_spawned_pid = -1;
  return 1;
}

/* Wait up to `ticks` x 10 ms for the collector we started to exit. */
static int spawned_exits_within(int ticks) {
  for (int i = 0; g_spawned_pid >= 0 && i < ticks; i++) {
    if (spawned_exited())
      return 1;
    struct timespec pause = {0, 10000000};
    nanosleep(&pause, NULL);
  }
  return 0;
}

/* 1 when the process listening at the other end of fd is of our uid: a
 * stand-alone collector's socket may lie in a directory others share. */
static int peer_is_ours(int fd) {
  struct ucred cred = {0, (uid_t)-1, (gid_t)-1};
  socklen_t len = sizeof cred;
  return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
         cred.uid == geteuid();
}

static int connect_or_spawn(void) {
  g_spawned_pid = -1; /* a fork's child did not start its parent's */
  g_spawned_failed = 0;
  int fd = connect_once();
  if (fd >= 0 && g_pod && !peer_is_ours(fd)) {
    close(fd);
    errno = EACCES;
    return -1;
  }
  if (fd >= 0 || !g_can_spawn || (errno != ENOENT && errno != ECONNREFUSED))
    return fd;
  g_spawned_pid = spawn_collector();
  if (g_spawned_pid < 0)
    return -1;
  int gone_at = -1;
  for (int i = 0; i < 500; i++) { /* up to 5 s for it to listen */
    struct timespec pause = {0, 10000000};
    nanosleep(&pause, NULL);
    if ((fd = connect_once()) >= 0)
      return fd;
    /* Once it has exited — it lost the socket to another collector, or it
     * failed and said why on stderr — give a winner 20 ms, then stop. */
    if (gone_at < 0 && spawned_exited())
      gone_at = i;
    if (gone_at >= 0 && i - gone_at >= 2)
      break;
  }
  g_spawned_failed = gone_at >= 0;
  return -1;
}

/* The collector's contract when it refused ours (GT_ACK_CONTRACT, or a
 * protocol 1 collector's refusal), for the one line that says so. */
static struct gt_contract g_their_contract;

/* 0 accepted; -1 refused or unanswered (errno); -2 out of descriptors; -3
 * the contracts differ (g_their_contract). */
static int send_hello(int fd, int memfd, size_t bytes, uint32_t pid) {
  struct gt_hello hello;
  memset(&hello, 0, sizeof hello);
  hello.magic = GT_HELLO_MAGIC;
  hello.contract = gt_contract_ours();
  hello.pid = pid;
  hello.ppid = (uint32_t)getppid();
  hello.ring_bytes = bytes;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  hello.start_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
  int cfd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (cfd >= 0) {
    ssize_t n = read(cfd, hello.cmdline, sizeof hello.cmdline - 1);
    close(cfd);
    for (ssize_t i = 0; i < n; i++)
      if (hello.cmdline[i] == '\0')
        hello.cmdline[i] = ' ';
    while (n > 0 && hello.cmdline[n - 1] == ' ')
      n--;
    hello.cmdline_len = n > 0 ? (uint32_t)n : 0;
  }
  int ack = gt_hello_exchange(fd, &hello, memfd, 5000, &g_their_contract);
  if (ack == GT_ACK_CONTRACT || (ack == GT_ACK_REFUSED && g_their_contract.protocol == 1))
    return -3;
  if (ack != GT_ACK_OK) {
    if (ack > 0) /* else errno says why no answer came */
      errno = ack == GT_ACK_REFUSED ? EACCES : EPROTO;
    return ack == GT_ACK_NO_FDS ? -2 : -1;
  }
  return 0;
}

/* The contracts differ: one line, both named (protocol.h). */
static void warn_contract(uint32_t pid) {
  char theirs[48], ours[48];
  struct gt_contract mine = gt_contract_ours();
  gt_contract_format(&g_their_contract, theirs, sizeof theirs);
  gt_contract_format(&mine, ours, sizeof ours);
  gt_warn("gputrace: the collector at %s speaks contract %s, this shim %s "
          "(protocol/ring/kinds/APIs): pid %u runs untraced",
          g_socket, theirs, ours, pid);
}

static int make_ring(struct gt_ring *ring, size_t bytes, uint32_t pid, int *memfd) {
  /* Sizing a memfd past RLIMIT_FSIZE raises SIGXFSZ, which would kill the
   * traced program: stay under the limit (a smaller ring), or give up. */
  struct rlimit fsize;
  if (getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY &&
      bytes > fsize.rlim_cur)
    bytes = (size_t)fsize.rlim_cur;
  size_t len = gt_ring_bytes_for(bytes);
  if (len == 0) {
    errno = EFBIG;
    return -1;
  }
  int fd =
      (int)syscall(SYS_memfd_create, "gputrace-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return -1;
  fd = move_high(fd);
  void *mem = MAP_FAILED;
  if (ftruncate(fd, (off_t)len) == 0)
    /* Fault the whole ring in now, once (docs/PERFORMANCE.md, "Figures
     * moved out of code comments"), rather than on the hot path, where the
     * first write to each fresh 4 KiB page would take a page fault on the
     * traced thread. */
    mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (mem == MAP_FAILED) {
    close(fd);
    return -1;
  }
  gt_ring_init(mem, bytes, pid,
               gt_mode_now() & GT_MODE_TSC ? GT_CLOCK_TSC : GT_CLOCK_MONOTONIC);
  fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  gt_ring_attach(ring, mem, len);
  g_map = mem;
  g_map_len = len;
  *memfd = fd;
  return 0;
}

int gt_transport_open(struct gt_ring *ring, size_t bytes, uint32_t pid) {
  if (!g_socket[0])
    return -1; /* prepare_env already warned */
  int memfd = -1;
  if (make_ring(ring, bytes, pid, &memfd) != 0) {
    gt_warn("gputrace: cannot create the trace ring (%s); running untraced",
            strerror(errno));
    return -1;
  }
  const char *what = "connect";
  int fd = connect_or_spawn();
  int ok = fd >= 0, no_fds = 0, contract = 0;
  if (ok) {
    what = "handshake";
    int sent = send_hello(fd, memfd, g_map_len, pid);
    ok = sent == 0;
    no_fds = sent == -2;
    contract = sent == -3;
    /* It listens before it opens the output (the socket decides which of
     * racing collectors runs): one that then cannot open it closes our
     * connection unanswered and exits. */
    if (!ok && (errno == ECONNRESET || errno == EPIPE) && spawned_exits_within(100))
      g_spawned_failed = 1;
  }
  int saved = errno;
  close(memfd);
  if (!ok) {
    if (g_spawned_failed)
      gt_warn("gputrace: the collector did not start (its message is above); pid %u "
              "runs untraced",
              pid);
    else if (contract)
      warn_contract(pid);
    else if (no_fds) /* the collector said so (protocol.h) */
      gt_warn("gputrace: the collector at %s is out of file descriptors (its hard "
              "limit, ulimit -Hn, is too low for this many traced processes); pid %u "
              "runs untraced",
              g_socket, pid);
    else
      gt_warn("gputrace: no collector at %s (%s: %s); pid %u runs untraced", g_socket,
              what, strerror(saved), pid);
    if (fd >= 0)
      close(fd);
    munmap(g_map, g_map_len);
    g_map = NULL;
    return -1;
  }
  struct stat st;
  fstat(fd, &st);
  g_sock_dev = st.st_dev;
  g_sock_ino = st.st_ino;
  g_sock = fd;
  return 0;
}

void gt_transport_forget(void) {
  if (sock_ours()) /* else the number may be one of the program's files now */
    close(g_sock);
  g_sock = -1;
  if (g_map)
    munmap(g_map, g_map_len);
  g_map = NULL;
  g_out_mode = "--append"; /* a child adds to its parent's trace */
}

int gt_transport_peer_gone(void) {
  if (g_sock < 0)
    return 0; /* no socket to ask: the collector goes on by our pid */
  if (!sock_ours()) {
    g_sock = -1; /* the program closed it; never touch that number again */
    return 0;
  }
  struct pollfd p = {.fd = g_sock, .events = POLLIN};
  return poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0;
}
