/* cmd_record.c — `gputrace record [-o FILE] [--ring-kb N]
 * [--stacks alloc|all|none|alloc+free] [-q] -- CMD [ARGS...]`
 *
 * Starts a collector on a fresh socket, waits until it has opened the output
 * (so an unwritable output fails before CMD runs), then runs CMD with the
 * shim preloaded. CMD's environment differs only by LD_PRELOAD (the shim is
 * prepended), GPUTRACE_SOCKET and NVTX_INJECTION64_PATH: the CUDA runtime
 * it loads is its own choice. Our messages go to stderr only. Exits with
 * CMD's status, or 128+N when CMD died of signal N; 2 for usage errors and
 * a collector that could not start, 127 when CMD cannot be run. In those
 * two cases the single-file trace we created, which holds no record, is
 * removed (still our inode, at most its header): it would refuse the rerun.
 * After a trace worth reading (and not -q), the last line names the
 * commands that read it next.
 *
 * Signals: CMD shares our process group (so the terminal's job control
 * treats it as the job), the collector gets a group of its own (signals CMD
 * sends to its group never reach it). SIGINT, SIGTERM, SIGHUP, SIGUSR1 and
 * SIGUSR2 are taken through a signalfd and passed on to CMD, as sudo does:
 * except when CMD already got them — sent by the kernel (a terminal's ^C
 * goes to the whole foreground group) or by a process of our group (CMD's
 * kill(0, sig)). Signals ignored when record started stay ignored, for CMD
 * too. CMD starts with the signal mask and dispositions record was given.
 *
 * Options: the table in parse(); the first argument that is not an option
 * (or everything after `--`) is CMD. Options for the collector are checked
 * here, before CMD runs, and passed on as given.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "gputrace/knobs.h"
#include "gputrace/outfile.h"
#include "gputrace/paths.h"
#include "gputrace/protocol.h"
#include "gputrace/trace_file.h"
#include "notices.h"
#include "shared_options.h"
#include "util.h"

/* Collector options record passes on as given (collector/main.c), checked
 * here first so that a bad one fails before CMD runs: always-on recording
 * (collector/output.c), live profiles (collector/liveprof.c) and the
 * flight recorder (collector/control.c). */
enum {
  PASS_MAX_SIZE = GT_PASS_MAX_SIZE, /* the rolling ones first (shared_options.h) */
  PASS_KEEP = GT_PASS_KEEP,
  PASS_ROLL_SIZE = GT_PASS_ROLL_SIZE,
  PASS_PPROF_DIR = GT_PASS_ROLLING,
  PASS_PPROF_EVERY,
  PASS_PPROF_KEEP,
  PASS_FLIGHT,
  PASS_WEBHOOK,
  PASS_COUNT
};
static const char *const pass_flag[PASS_COUNT] = {
    GT_PASS_ROLLING_FLAGS, "--pprof-dir",       "--pprof-every",
    "--pprof-keep",        "--flight-recorder", "--snapshot-webhook"};

struct record_opts {
  const char *output;
  int force;     /* --force: overwrite an existing trace of ours */
  int output_fd; /* the single-file output, opened here; -1 when rolling */
  dev_t out_dev; /* what output_fd is: a name removed must still be it */
  ino_t out_ino;
  const char *ring_kb;
  const char *capture_range;    /* GPUTRACE_CAPTURE_RANGE for the program */
  const char *stacks;           /* GPUTRACE_STACKS for the program */
  const char *prometheus;       /* serve live metrics (docs/monitoring/README.md) */
  const char *pass[PASS_COUNT]; /* NULL: not given */
  int flight;                   /* --flight-recorder or its knob: no file here */
  int quiet;
  char **cmd;
};

/* --pprof-dir: a directory we can write (no value stored: it is passed on). */
static int writable_dir(const struct gt_option *o, const char *dir, char *want,
                        size_t len) {
  (void)o;
  struct stat sb;
  const char *why = stat(dir, &sb) != 0             ? strerror(errno)
                    : !S_ISDIR(sb.st_mode)          ? "not a directory"
                    : access(dir, W_OK | X_OK) != 0 ? strerror(errno)
                                                    : NULL;
  if (why)
    snprintf(want, len, "a directory you can write; this one: %s", why);
  return why ? -1 : 0;
}

/* The fields of collector option i (pass_flag), checked by type t and kept
 * in op->pass[i] (shared_options.h). */
#define PASSED(op, i, t, a, h) GT_OPT_PASSED(pass_flag, (op)->pass, i, t, a, h)

/* GT_OPTIONS_RUN, or the status to exit with. */
static int parse(int argc, char **argv, struct record_opts *o) {
  int nargs;
  const struct gt_option options[] = {
      GT_OPT_OUTPUT(&o->output, "FILE", "the trace (default: a new gputrace-N.gtrace)"),
      GT_OPT_FORCE(&o->force),
      {.name = "ring-kb",
       .type = GT_OPTION_KNOB,
       .knob = GT_KNOB_RING_KB,
       .arg = "N",
       .help = "ring per traced process, 16 to 1048576 KiB",
       .text = &o->ring_kb},
      {.name = "capture-range",
       .type = GT_OPTION_KNOB,
       .knob = GT_KNOB_CAPTURE_RANGE,
       .arg = "cudaProfilerApi|nvtx:NAME",
       .help = "only inside cudaProfilerStart/Stop, or NVTX NAME",
       .text = &o->capture_range},
      {.name = "stacks",
       .type = GT_OPTION_KNOB,
       .knob = GT_KNOB_STACKS,
       .arg = "alloc|all|none|alloc+free",
       .help = "allocs and sites (default), all calls, none, +frees",
       .text = &o->stacks},
      GT_OPT_PROMETHEUS(&o->prometheus),
      GT_OPT_ROLLING(pass_flag, o->pass),
      {PASSED(o, PASS_PPROF_DIR, GT_OPTION_CALLBACK, "DIR",
              "write live pprof profiles to DIR"),
       .callback = writable_dir},
      {PASSED(o, PASS_PPROF_EVERY, GT_OPTION_KNOB, "DURATION",
              "a live profile every DURATION (default 60s)"),
       .knob = GT_KNOB_PPROF_EVERY},
      {PASSED(o, PASS_PPROF_KEEP, GT_OPTION_KNOB, "N",
              "keep the newest N live profiles (default 60)"),
       .knob = GT_KNOB_PPROF_KEEP},
      {PASSED(o, PASS_FLIGHT, GT_OPTION_KNOB, "SIZE|DURATION",
              "keep the run's last in memory; `snapshot` writes it"),
       .knob = GT_KNOB_FLIGHT_RECORDER},
      {PASSED(o, PASS_WEBHOOK, GT_OPTION_CALLBACK, "local|any",
              "POST /snapshot on --prometheus takes a snapshot"),
       .callback = gt_option_webhook},
      GT_OPT_FLAG('q', "quiet", &o->quiet, "no closing lines (summary, next commands)"),
      GT_OPT_END,
  };
  const struct gt_command cmd = {.prog = "gputrace record",
                                 .options = options,
                                 .args = "-- CMD [ARGS...]",
                                 .min_args = 1,
                                 .max_args = -1,
                                 .flags = GT_CMD_STOP_AT_ARG,
                                 .about = "run CMD traced, into one trace file"};
  int st = gt_options_parse(&cmd, argc, argv, &nargs);
  o->cmd = argv;
  return st;
}

/* Open the single-file output here, before anything runs, by outfile.h's
 * rules: -o FILE is created (an existing one only with --force, and only a
 * regular file of ours), the default is the first free gputrace-N.gtrace
 * (O_EXCL: a name planted by someone else is skipped). A rolling set is
 * left to the collector. 0, or -1 after the message. */
static int open_output(struct record_opts *o, char *name, size_t len) {
  char err[512];
  o->flight = o->pass[PASS_FLIGHT] || gt_knob(GT_KNOB_FLIGHT_RECORDER);
  int rolling = o->pass[PASS_MAX_SIZE] || o->pass[PASS_KEEP] ||
                o->flight; /* the collector names them */
  o->output_fd = -1;
  if (rolling && !o->output)
    o->output = "gputrace.gtrace";
  if (rolling)
    return 0;
  if (o->output)
    o->output_fd =
        gt_out_open(o->output, o->force ? GT_OUT_FORCE : GT_OUT_NEW, err, sizeof err);
  else if ((o->output_fd =
                gt_out_pick("gputrace-", 1, ".gtrace", name, len, err, sizeof err)) >= 0)
    o->output = name;
  if (o->output_fd < 0) {
    fprintf(stderr, "gputrace record: %s; %s not run\n", err, o->cmd[0]);
    return -1;
  }
  struct stat st;
  if (fstat(o->output_fd, &st) == 0)
    o->out_dev = st.st_dev, o->out_ino = st.st_ino;
  return 0;
}

/* CMD never ran, or the collector never started: the trace holds no record
 * (at most its file header) and would only be in the way of a rerun, which
 * refuses an existing file. Removed only if the name still is the file we
 * created (same inode; a rolling set is the collector's). 1 if removed. */
static int drop_unused_output(const struct record_opts *o) {
  struct stat named;
  if (!o->out_ino || lstat(o->output, &named) != 0 || !S_ISREG(named.st_mode) ||
      named.st_dev != o->out_dev || named.st_ino != o->out_ino ||
      named.st_size > (off_t)sizeof(struct gt_file_header) || unlink(o->output) != 0)
    return 0;
  if (!o->quiet)
    fprintf(stderr, "gputrace record: %s removed: it recorded nothing\n", o->output);
  return 1;
}

/* After a trace worth reading: the commands that read it, ready to paste
 * (a name the shell would split or expand is single-quoted). */
static void say_next(const char *path) {
  char q[PATH_MAX * 2 + 3];
  size_t n = 0;
  int plain = strspn(path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                           "0123456789_-+=.,/:@%") == strlen(path);
  if (!plain)
    q[n++] = '\'';
  for (const char *c = path; *c && n + 6 < sizeof q; c++)
    if (!plain && *c == '\'')
      memcpy(q + n, "'\\''", 4), n += 4;
    else
      q[n++] = *c;
  if (!plain)
    q[n++] = '\'';
  q[n] = '\0';
  fprintf(
      stderr,
      "next: gputrace report %s \xc2\xb7 gputrace leaks %s \xc2\xb7 gputrace chrome %s\n",
      q, q, q);
}

/* Signals passed on to the command, and what record started with. */
static const int g_relayed[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
static sigset_t g_orig_mask;
static struct sigaction g_orig_int, g_orig_quit;

/* In a child, before exec: the mask and dispositions record was given. */
static void restore_signals(void) {
  sigaction(SIGINT, &g_orig_int, NULL);
  sigaction(SIGQUIT, &g_orig_quit, NULL);
  sigprocmask(SIG_SETMASK, &g_orig_mask, NULL);
}

static pid_t start_collector(const char *collector, const char *socket_path,
                             const struct record_opts *o, int *control_w) {
  int ready[2], control[2];
  if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(control, O_CLOEXEC) != 0)
    return -1;
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0); /* the command's kill(0, sig) is not for the collector */
    restore_signals();
    char rfd[16], cfd[16];
    fcntl(ready[1], F_SETFD, 0);
    fcntl(control[0], F_SETFD, 0);
    snprintf(rfd, sizeof rfd, "%d", ready[1]);
    snprintf(cfd, sizeof cfd, "%d", control[0]);
    dup2(2, 1); /* never write into the traced command's stdout */
    unsetenv("LD_PRELOAD");
    setenv(GT_ENV_DISABLE, "1", 1);
    char ofd[16];
    snprintf(ofd, sizeof ofd, "%d", o->output_fd);
    const char *args[32] = {collector,  "--socket",     socket_path,
                            "--output", o->output,      "--ready-fd",
                            rfd,        "--control-fd", cfd};
    int n = 9;
    if (o->output_fd >= 0) {
      fcntl(o->output_fd, F_SETFD, 0);
      args[n++] = "--output-fd", args[n++] = ofd;
    } else if (o->force) {
      args[n++] = "--force";
    }
    if (o->prometheus)
      args[n++] = "--prometheus", args[n++] = o->prometheus;
    for (int i = 0; i < PASS_COUNT; i++)
      if (o->pass[i])
        args[n++] = pass_flag[i], args[n++] = o->pass[i];
    if (o->quiet)
      args[n++] = "--quiet";
    args[n] = NULL;
    execv(collector, (char *const *)args);
    fprintf(stderr, "gputrace record: cannot run %s: %s\n", collector, strerror(errno));
    _exit(2);
  }
  if (pid > 0)
    setpgid(pid, pid); /* also here: no race with the child's own call */
  close(ready[1]);
  close(control[0]);
  char byte = 0;
  struct pollfd p = {.fd = ready[0], .events = POLLIN};
  int ok =
      pid > 0 && poll(&p, 1, 30000) == 1 && read(ready[0], &byte, 1) == 1 && byte == 'R';
  close(ready[0]);
  if (!ok) {
    close(control[1]);
    if (pid > 0) {
      kill(pid, SIGTERM);
      waitpid(pid, NULL, 0);
    }
    return -1;
  }
  *control_w = control[1];
  return pid;
}

/* 1 when the LD_PRELOAD entry of `len` bytes at `entry` is a sanitizer's
 * runtime (gcc's libasan.so.8, libtsan, ..., clang's libclang_rt.*), by its
 * file name. */
static int sanitizer_runtime(const char *entry, size_t len) {
  static const char *const names[] = {"libasan.",    "libhwasan.",  "libtsan.",
                                      "liblsan.",    "libmemprof.", "libubsan.",
                                      "libclang_rt."};
  size_t base = len;
  while (base > 0 && entry[base - 1] != '/')
    base--;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (len - base >= strlen(names[i]) &&
        !strncmp(entry + base, names[i], strlen(names[i])))
      return 1;
  return 0;
}

/* The shim goes first in LD_PRELOAD, except after the sanitizer runtimes
 * the user put first: ASan aborts a program whose first library is not its
 * runtime ("ASan runtime does not come first"), so
 * `LD_PRELOAD=$(gcc -print-file-name=libasan.so) gputrace record -- ./app`
 * records an ASan-built program. The rest of the value is kept as it was
 * (ld.so splits it at ':' and ' '). */
static void prepend_preload(const char *shim) {
  const char *old = getenv("LD_PRELOAD");
  if (!old || !*old) {
    setenv("LD_PRELOAD", shim, 1);
    return;
  }
  size_t keep = 0; /* the leading sanitizer runtimes: old[0, keep) */
  for (size_t at = 0; old[at];) {
    size_t len = strcspn(old + at, ": ");
    if (len > 0 && !sanitizer_runtime(old + at, len))
      break;
    keep = len > 0 ? at + len : keep;
    at += len + (old[at + len] != '\0');
  }
  size_t len = strlen(shim) + strlen(old) + 2;
  char *v = malloc(len);
  if (!v)
    return;
  if (keep)
    snprintf(v, len, "%.*s:%s%s", (int)keep, old, shim, old + keep);
  else
    snprintf(v, len, "%s:%s", shim, old);
  setenv("LD_PRELOAD", v, 1);
  free(v);
}

/* Fork and exec CMD. *ran is 0 when the exec failed (CMD never ran: an exit
 * status 127 of CMD itself is not that), told through a close-on-exec pipe
 * that an exec closes unwritten. */
static pid_t start_command(char **cmd, const char *shim, const char *socket_path,
                           const struct record_opts *o, int *ran) {
  int told[2];
  *ran = 1;
  if (pipe2(told, O_CLOEXEC) != 0)
    told[0] = told[1] = -1;
  pid_t pid = fork();
  if (pid != 0) {
    char byte;
    ssize_t n = 0;
    close(told[1]);
    while (told[0] >= 0 && pid > 0 && (n = read(told[0], &byte, 1)) < 0 && errno == EINTR)
      ;
    *ran = n != 1;
    close(told[0]);
    return pid;
  }
  restore_signals();
  prepend_preload(shim);
  setenv(GT_ENV_SOCKET, socket_path, 1);
  unsetenv(GT_ENV_OUTPUT); /* no second collector: this one serves all */
  if (o->ring_kb)
    setenv(GT_ENV_RING_KB, o->ring_kb, 1);
  if (o->capture_range)
    setenv("GPUTRACE_CAPTURE_RANGE", o->capture_range, 1);
  if (o->stacks)
    setenv("GPUTRACE_STACKS", o->stacks, 1);
  execvp(cmd[0], cmd);
  int saved = errno;
  if (told[1] >= 0) {
    ssize_t ignored = write(told[1], "x", 1); /* an empty pipe takes a byte */
    (void)ignored;
  }
  fprintf(stderr, "gputrace record: cannot run '%s': %s\n", cmd[0], strerror(saved));
  _exit(127);
}

static int g_last_signal; /* the signal that ended the last process waited for */

static int decode_status(int status) {
  g_last_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

static int wait_status(pid_t pid) {
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return 127;
  return decode_status(status);
}

/* Take the relayed signals (and SIGCHLD) through a signalfd from now on;
 * a signal ignored when record started stays ignored. -1 on failure. */
static int take_signals(void) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  for (size_t i = 0; i < sizeof g_relayed / sizeof g_relayed[0]; i++) {
    struct sigaction old;
    if (sigaction(g_relayed[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
      sigaddset(&set, g_relayed[i]);
  }
  sigprocmask(SIG_BLOCK, &set, &g_orig_mask);
  return signalfd(-1, &set, SFD_CLOEXEC);
}

/* Pass a signal on to the command unless it got it already: sent by the
 * kernel (the terminal signals the whole foreground group) or by a process
 * of our group (the command's kill(0, sig), or one of its children). */
static void relay(pid_t child, const struct signalfd_siginfo *si) {
  if (si->ssi_signo == SIGCHLD || si->ssi_code > 0)
    return;
  pid_t from = (pid_t)si->ssi_pid;
  if (from == child || (from > 0 && getpgid(from) == getpgrp()))
    return;
  kill(child, (int)si->ssi_signo);
}

/* Wait for the command, relaying signals meanwhile. */
static int wait_command(pid_t child, int sfd) {
  for (;;) {
    int status;
    pid_t r = waitpid(child, &status, WNOHANG);
    if (r == child)
      return decode_status(status);
    if (r < 0 && errno != EINTR)
      return 127;
    struct signalfd_siginfo si;
    ssize_t n = read(sfd, &si, sizeof si); /* SIGCHLD wakes it too */
    if (n == (ssize_t)sizeof si)
      relay(child, &si);
    else if (n < 0 && errno != EINTR)
      return wait_status(child);
  }
}

int cmd_record(int argc, char **argv) {
  struct record_opts o = {0};
  int rc = parse(argc, argv, &o);
  if (rc != GT_OPTIONS_RUN)
    return rc;
  char shim[PATH_MAX], collector[PATH_MAX], socket_path[128], err[256], out[64];
  o.output_fd = -1;
  if (gt_beside_self(GT_ENV_LIB, "../lib/libgputrace.so", R_OK, shim, sizeof shim) != 0 ||
      gt_beside_self(GT_ENV_COLLECTOR, "gputrace-collector", X_OK, collector,
                     sizeof collector) != 0) {
    fprintf(stderr, "gputrace record: cannot find libgputrace.so and gputrace-collector "
                    "next to this program (set GPUTRACE_LIB / GPUTRACE_COLLECTOR)\n");
    return 2;
  }
  int sock = gt_socket_path("record", (unsigned long)getpid(), socket_path,
                            sizeof socket_path, err, sizeof err);
  if (sock < 0) {
    fprintf(stderr, "gputrace record: %s\n", err);
    return 2;
  }
  if (sock > 0 && !o.quiet) /* the usual directory is squatted: a private one */
    fprintf(stderr, "gputrace record: %s\n", err);
  if (open_output(&o, out, sizeof out) != 0)
    return 2;
  /* SIGQUIT is for the command; the relayed signals come through the signalfd. */
  struct sigaction ign = {.sa_handler = SIG_IGN};
  sigaction(SIGINT, NULL, &g_orig_int);
  sigaction(SIGQUIT, &ign, &g_orig_quit);
  int sfd = take_signals();
  int control_w = -1;
  pid_t coll = start_collector(collector, socket_path, &o, &control_w);
  if (coll < 0) {
    fprintf(stderr, "gputrace record: the collector did not start; %s not run\n",
            o.cmd[0]);
    drop_unused_output(&o);
    return 2;
  }
  if (o.output_fd >= 0)
    close(o.output_fd); /* the collector has its own */
  if (o.flight && !o.quiet)
    fprintf(stderr,
            "gputrace record: flight recorder in collector %ld: `gputrace snapshot -o "
            "FILE %ld` (or kill -USR2 %ld) writes what it keeps\n",
            (long)coll, (long)coll, (long)coll);
  int ran;
  pid_t child = start_command(o.cmd, shim, socket_path, &o, &ran);
  if (child <= 0 || !ran) { /* the collector's closing line would contradict ours */
    ssize_t ignored = write(control_w, (char[]){GT_CONTROL_NEVER_RAN}, 1);
    (void)ignored;
  }
  int status = child <= 0 ? 127
               : sfd >= 0 ? wait_command(child, sfd)
                          : wait_status(child);
  if (child > 0 && g_last_signal && o.flight) { /* the flight recorder's trigger */
    unsigned char died[GT_CONTROL_DIED_BYTES] = {GT_CONTROL_DIED,
                                                 (unsigned char)g_last_signal};
    uint32_t pid = (uint32_t)child;
    memcpy(died + 2, &pid, sizeof pid);
    ssize_t ignored = write(control_w, died, sizeof died);
    (void)ignored;
  }
  close(control_w); /* the collector finishes once the traced processes are gone */
  int coll_status = wait_status(coll);
  if (coll_status != 0) {
    fprintf(stderr, "gputrace record: the collector reported errors (status %d)\n",
            coll_status);
    return status;
  }
  if ((child <= 0 || !ran) && drop_unused_output(&o))
    return status;             /* CMD never ran: nothing to read */
  if (!o.quiet && !o.flight && /* after the collector's closing line */
      !gt_notice_no_cuda_file("gputrace record", o.output) && o.output_fd >= 0)
    say_next(o.output);
  return status;
}
