/* main.c — gputrace-collector: options, socket, the drain loop.
 *
 * Usage: gputrace-collector --socket PATH --output FILE [options], the
 * options in parse_options' table (gputrace/options.h: --help lists them,
 * a bad one is status 2); --version prints "gputrace-collector VERSION".
 *
 * The output (include/gputrace/outfile.h): a new file (--new, the
 * default), never through a symbolic link; --force overwrites an existing regular file of
 * ours;
 * --append adds to an existing trace (a later collector for one file);
 * --pick: FILE is a name gputrace chose, so when it is taken the trace goes
 * to FILE-1.gtrace, FILE-2.gtrace, ... instead; --output-fd: `record` has
 * opened FILE already.
 *
 * --prometheus serves live counters on http://ADDR:PORT/metrics for the
 * whole run (docs/monitoring/README.md). --pprof-dir writes each traced
 * process's memory and GPU profiles there every --pprof-every (default 60s;
 * liveprof.c, docs/profiles.md); without the options, GPUTRACE_PPROF_DIR,
 * GPUTRACE_PPROF_EVERY and GPUTRACE_PPROF_KEEP (plain LD_PRELOAD: the
 * collector inherits the first traced process's environment), where a
 * directory that cannot be written is a warning, not a stop.
 *
 * Descriptors (fds.c): the soft RLIMIT_NOFILE is raised to the hard one at
 * start; out of descriptors, the listening socket rests (not polled) until
 * one frees, and the run ends with a NOTE counting the processes that
 * waited for one and those that ran untraced for want of one.
 *
 * --flight-recorder SIZE (or GPUTRACE_FLIGHT_RECORDER, inherited like the
 * live profiles' knobs) keeps the last SIZE of trace in memory instead
 * (output.c) and writes it only when asked: on its control socket
 * (`gputrace snapshot`) or SIGUSR2 (control.c), or by itself when an
 * allocation runs out of memory (control.c's trigger, which watches the
 * records the sink takes); with --keep, only what came within DURATION of
 * the last record is kept; not with --max-size. --flight-recorder DURATION
 * (knobs.h's WINDOW type) is --keep DURATION within GT_WINDOW_TIME_CAP_BYTES
 * (not with --keep). --snapshot-webhook local|any (with --prometheus and
 * the flight recorder) takes POST /snapshot there as SIGUSR2 (prom.c).
 *
 * Lifetime: with --control-fd (the `record` command) it runs until that
 * descriptor reaches EOF (the recorded command has exited, or the recorder
 * died) and no traced process remains; a GT_CONTROL_NEVER_RAN byte on it
 * first means the command could not be run: no closing summary line
 * (record removes the empty trace and says so). Without it (started by the shim
 * under plain LD_PRELOAD) it stops once no process has been connected for
 * --linger-ms; with --serve (`gputrace collect`: one collector for every
 * traced process of a pod, docs/kubernetes.md) it serves processes as they
 * come and go until a signal stops it, SIGINT included. SIGTERM and SIGHUP
 * make it drain what is there and stop, with a NOTE in the trace saying it
 * stopped early when traced processes were still running; a signal ignored
 * when it started (nohup) stays ignored. Without --serve SIGINT is ignored,
 * so a ^C meant for the traced program does not cut the trace short.
 * `record` starts it in its own process group, so signals the program sends
 * to its group do not reach it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "collector.h"
#include "gputrace/knobs.h"
#include "gputrace/options.h"
#include "gputrace/outfile.h"
#include "gputrace/protocol.h"
#include "gputrace/trace_file.h"
#include "gputrace/version.h"
#include "util.h" /* gt_set_oom_handler */

#define GT_MAX_CLIENTS 4096
#define GT_DRAIN_BUDGET 65536           /* records per process per pass */
#define GT_DRAIN_FIRST_PCT 1            /* time_to_compress */
#define GT_CUT_INTERVAL_NS 200000000ull /* chunk at least every 200 ms */
#define GT_SYMQ_STALL_NS                                                                 \
  30000000000ull /* symbolizing the rest: give up after 30 s stuck */

struct options {
  const char *socket_path;
  const char *output;
  int mode;      /* enum gt_out_mode */
  int pick;      /* --pick */
  int output_fd; /* --output-fd, or -1 */
  int ready_fd;
  int control_fd;
  int autospawn;
  int serve; /* stand-alone (`gputrace collect`): until SIGTERM or SIGINT */
  int linger_ms;
  const char *prometheus;
  const char *webhook_text; /* --snapshot-webhook: local or any (prom.c) */
  int webhook;              /* it as GT_WEBHOOK_* */
  const char *pprof_dir;    /* live profiles (liveprof.c) */
  uint64_t pprof_every_ns;  /* 0: the knob's value */
  uint64_t pprof_keep;      /* when pprof_keep_given, else the knob's */
  int pprof_keep_given;
  uint64_t max_bytes, keep_ns, roll_bytes; /* always-on recording (output.c) */
  uint64_t flight_bytes;                   /* the flight recorder (control.c) */
};

static volatile sig_atomic_t g_stop, g_roll, g_snap; /* g_stop: the signal that asked */
static void on_term(int sig) {
  g_stop = sig;
}
static void on_usr1(int sig) {
  (void)sig;
  g_roll = 1;
}
static void on_usr2(int sig) {
  (void)sig;
  g_snap = 1;
}

/* Handle a signal unless it was ignored when we started: under nohup (or
 * an ignoring parent) SIGHUP must not stop the trace. */
static void handle_unless_ignored(int sig, void (*fn)(int)) {
  struct sigaction old;
  if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
    return;
  struct sigaction sa = {.sa_handler = fn};
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
}

static void setup_signals(int serve) {
  signal(SIGPIPE, SIG_IGN);
  if (serve) /* no traced program of ours: a ^C is for us */
    handle_unless_ignored(SIGINT, on_term);
  else
    signal(SIGINT, SIG_IGN); /* a ^C is for the traced program */
  signal(SIGXFSZ, SIG_IGN);  /* past a file size limit: EFBIG, reported, not death */
  signal(SIGTTOU, SIG_IGN);  /* in its own (background) group: stderr must not stop it */
  handle_unless_ignored(SIGTERM, on_term);
  handle_unless_ignored(SIGHUP, on_term);
  handle_unless_ignored(SIGUSR1, on_usr1);
  handle_unless_ignored(SIGUSR2, on_usr2);
}

/* GT_OPTIONS_RUN, or the status to exit with (--help, --version, an error). */
static int parse_options(int argc, char **argv, struct options *o) {
  *o = (struct options){
      .output_fd = -1, .ready_fd = -1, .control_fd = -1, .linger_ms = 1000};
  int nargs;
  const struct gt_option options[] = {
      {.name = "socket",
       .type = GT_OPTION_STRING,
       .arg = "PATH",
       .help = "listen on this unix socket",
       .value = GT_OPT_VALUE_PTR(&o->socket_path, const char *),
       .flags = GT_OPTION_REQUIRED},
      {.name = "output",
       .type = GT_OPTION_STRING,
       .arg = "FILE",
       .help = "the trace",
       .value = GT_OPT_VALUE_PTR(&o->output, const char *),
       .flags = GT_OPTION_REQUIRED},
      GT_OPT_SET(0, "new", &o->mode, GT_OUT_NEW, "FILE must be new (the default)"),
      GT_OPT_SET(0, "force", &o->mode, GT_OUT_FORCE,
                 "overwrite an existing FILE of yours"),
      GT_OPT_SET(0, "append", &o->mode, GT_OUT_APPEND, "add to an existing trace"),
      GT_OPT_FLAG(0, "pick", &o->pick, "FILE taken: FILE-1.gtrace, FILE-2.gtrace, ..."),
      GT_OPT_INT(0, "output-fd", &o->output_fd, "N", "FILE, opened already on fd N"),
      GT_OPT_INT(0, "ready-fd", &o->ready_fd, "N", "write R on fd N once listening"),
      GT_OPT_INT(0, "control-fd", &o->control_fd, "N",
                 "run until EOF on fd N and no process is left"),
      GT_OPT_FLAG(0, "autospawn", &o->autospawn,
                  "started by the shim (plain LD_PRELOAD)"),
      GT_OPT_FLAG(0, "serve", &o->serve, "serve every process until SIGTERM or SIGINT"),
      GT_OPT_INT(0, "linger-ms", &o->linger_ms, "N",
                 "stop N ms after the last process (default 1000)"),
      GT_OPT_FLAG(0, "quiet", &gt_collector_quiet, "no messages but errors"),
      GT_OPT_CALLBACK(0, "prometheus", &o->prometheus, gt_option_host_port, "ADDR:PORT",
                      "serve live metrics on http://ADDR:PORT/metrics"),
      GT_OPT_CALLBACK(0, "snapshot-webhook", &o->webhook_text, gt_option_webhook,
                      "local|any", "POST /snapshot on --prometheus takes a snapshot"),
      GT_OPT_SIZE(0, "max-size", &o->max_bytes, "SIZE",
                  "roll over files; delete the oldest past SIZE in all"),
      GT_OPT_DURATION(0, "keep", &o->keep_ns, "DURATION",
                      "roll over files; delete those older than DURATION"),
      GT_OPT_SIZE(0, "roll-size", &o->roll_bytes, "SIZE",
                  "roll over to a new file every SIZE"),
      GT_OPT_KNOB(0, "flight-recorder", &o->flight_bytes, GT_KNOB_FLIGHT_RECORDER,
                  "SIZE|DURATION", "keep the run's last in memory; write it when asked"),
      GT_OPT_STRING(0, "pprof-dir", &o->pprof_dir, "DIR",
                    "write live pprof profiles to DIR"),
      GT_OPT_KNOB(0, "pprof-every", &o->pprof_every_ns, GT_KNOB_PPROF_EVERY, "DURATION",
                  "a live profile every DURATION (default 60s)"),
      {.name = "pprof-keep",
       .type = GT_OPTION_KNOB,
       .knob = GT_KNOB_PPROF_KEEP,
       .arg = "N",
       .help = "keep the newest N live profiles (default 60)",
       .value = GT_OPT_VALUE_PTR(&o->pprof_keep, uint64_t),
       .seen = &o->pprof_keep_given},
      GT_OPT_END,
  };
  const struct gt_command cmd = {.prog = "gputrace-collector",
                                 .options = options,
                                 .about =
                                     "writes the trace of the processes that connect",
                                 .version = GT_VERSION};
  return gt_options_parse(&cmd, argc, argv, &nargs);
}

struct state {
  struct gt_client *clients[GT_MAX_CLIENTS];
  int nclients;
  int ever_connected;
  uint64_t idle_since_ns; /* when the last process went away */
  int control_fd;         /* -1 once it reached EOF (or without one) */
  int never_ran;          /* record wrote GT_CONTROL_NEVER_RAN: no closing line */
  int died_sig;           /* record wrote GT_CONTROL_DIED: the command's signal */
  uint32_t died_pid;      /* and its pid, until its records are all taken */
  struct gt_symq *symq;
};

static void remove_client(struct state *st, int i, uint64_t now) {
  st->clients[i] = st->clients[--st->nclients];
  if (st->nclients == 0)
    st->idle_since_ns = now;
}

/* Accept what is pending. Out of descriptors (fds.c), the reserve lets one
 * more in (to be told why, if none frees: clients.c), then the listening
 * socket rests until one frees or 100 ms pass: no loop around a readable
 * socket that cannot be accepted. */
static void accept_clients(struct state *st, int listen_fd) {
  uint64_t now = gt_now_ns();
  if (!gt_fds_retry(now))
    return;
  gt_fds_refill();
  for (;;) {
    struct gt_client *c = gt_client_accept(listen_fd, st->symq, now);
    if (!c && (errno == EMFILE || errno == ENFILE)) {
      if (gt_fds_use_reserve())
        continue;
      gt_fds_short(now);
      return;
    }
    if (!c)
      break;
    if (st->nclients == GT_MAX_CLIENTS) {
      gt_client_free(c); /* the process runs untraced: the shim says so */
      continue;
    }
    st->clients[st->nclients++] = c;
  }
  if (errno == EAGAIN || errno == EWOULDBLOCK)
    gt_fds_ok(); /* all taken: watch the socket again */
}

/* A process that connects again under a pid we serve has exec'd into a
 * traced image: the older connection's ring is final. */
static void end_older_images(struct state *st, struct gt_client *newer, uint64_t now) {
  for (int i = 0; i < st->nclients; i++)
    if (st->clients[i] != newer && gt_client_pid(st->clients[i]) == gt_client_pid(newer))
      gt_client_hangup(st->clients[i], now);
}

/* record's words on the control pipe (protocol.h), or its EOF. A message
 * is written whole, at once (under PIPE_BUF): read whole. */
static void read_control(struct state *st) {
  unsigned char buf[64];
  ssize_t got = read(st->control_fd, buf, sizeof buf);
  if (got <= 0) {
    st->control_fd = -1;
    return;
  }
  for (size_t i = 0; i < (size_t)got; i++)
    if (buf[i] == GT_CONTROL_NEVER_RAN) {
      st->never_ran = 1;
    } else if (buf[i] == GT_CONTROL_DIED && (size_t)got - i >= GT_CONTROL_DIED_BYTES) {
      st->died_sig = buf[i + 1];
      memcpy(&st->died_pid, buf + i + 2, sizeof st->died_pid);
      i += GT_CONTROL_DIED_BYTES - 1;
    }
}

/* The command died of a signal: once its records are all taken (no client
 * of its pid is left), the flight recorder's trigger (control.c). */
static void serve_death(struct state *st, struct gt_control *ctl) {
  if (!st->died_sig)
    return;
  for (int i = 0; i < st->nclients; i++)
    if (gt_client_pid(st->clients[i]) == st->died_pid)
      return;
  gt_control_died(ctl, st->died_sig, st->died_pid);
  st->died_sig = 0;
}

/* Poll the listening socket, the control pipe, and every client's socket
 * and pidfd; wait up to timeout_ms for anything; hand events to clients. */
static void watch(struct state *st, int listen_fd, struct gt_sink *sink, int timeout_ms) {
  static struct pollfd p[2 * GT_MAX_CLIENTS + 2];
  int n = 0;
  p[n++] = (struct pollfd){.fd = gt_fds_starved() ? -1 : listen_fd, .events = POLLIN};
  p[n++] = (struct pollfd){.fd = st->control_fd, .events = POLLIN};
  for (int i = 0; i < st->nclients; i++) {
    p[n++] = (struct pollfd){.fd = gt_client_fd(st->clients[i]), .events = POLLIN};
    p[n++] = (struct pollfd){.fd = gt_client_pidfd(st->clients[i]), .events = POLLIN};
  }
  if (poll(p, (nfds_t)n, timeout_ms) < 0)
    for (int i = 0; i < n; i++)
      p[i].revents = 0; /* EINTR: deadlines are still checked below */
  if (st->control_fd >= 0 && p[1].revents)
    read_control(st);
  uint64_t now = gt_now_ns();
  int nclients = st->nclients; /* p[] follows this order; removal moves the last */
  for (int i = nclients; i-- > 0;) {
    struct gt_client *c = st->clients[i];
    int r = gt_client_event(c, p[2 + 2 * i].revents, p[3 + 2 * i].revents, sink, now);
    if (r < 0) {
      gt_client_free(c);
      remove_client(st, i, now);
    } else if (r > 0) {
      st->ever_connected = 1;
      end_older_images(st, c, now);
    }
  }
}

/* Drain each client; a finished one's death (clients.c) is the flight
 * recorder's trigger (control.c), its records all taken. */
static unsigned drain_all(struct state *st, struct gt_sink *sink,
                          struct gt_control *ctl) {
  unsigned total = 0;
  uint64_t now = gt_now_ns();
  for (int i = 0; i < st->nclients;) {
    total += gt_client_drain(st->clients[i], sink, GT_DRAIN_BUDGET, now);
    if (gt_client_done(st->clients[i], now)) {
      int death = gt_client_death(st->clients[i]);
      if (death >= 0)
        gt_control_died(ctl, death, gt_client_pid(st->clients[i]));
      gt_client_finish(st->clients[i], sink, now);
      remove_client(st, i, now);
      continue;
    }
    i++;
  }
  return total;
}

/* Compress now, or keep draining? While a ring fills up (a launch storm
 * makes records faster than zstd takes them) draining wins and the queue
 * absorbs the backlog, unless the queue itself is full. Draining once a
 * ring's backlog reaches 1 % keeps the blocks the producer reuses (ring.c:
 * lowest first) few enough to stay in cache (docs/PERFORMANCE.md, Launch
 * overhead: the pool's working set). */
static int time_to_compress(const struct state *st, struct gt_sink *sink) {
  if (!gt_sink_has_room(sink))
    return 1;
  for (int i = 0; i < st->nclients; i++)
    if (gt_client_fill_pct(st->clients[i]) >= GT_DRAIN_FIRST_PCT)
      return 0;
  return 1;
}

static int finished(const struct state *st, const struct options *o, uint64_t now) {
  if (st->nclients > 0)
    return 0;
  if (g_stop)
    return 1;
  if (o->serve)
    return 0;
  if (o->control_fd >= 0)
    return st->control_fd < 0;
  uint64_t linger = (uint64_t)o->linger_ms * 1000000ull;
  if (!st->ever_connected)
    linger = 10 * linger + 10000000000ull; /* give the first process time */
  return now - st->idle_since_ns >= linger;
}

/* SIGUSR1: close the current file (rolling output) so it can be read while
 * tracing goes on; everything taken so far goes into it first. */
static void roll_now(struct gt_sink *sink, struct gt_output *out) {
  g_roll = 0;
  gt_sink_cut(sink);
  while (gt_sink_write_one(sink))
    ;
  gt_output_roll(out);
}

/* Stopping on a signal while traced processes run: drain what their rings
 * hold and say in the trace that the rest of the run is missing (the
 * reader warns about this note in every command). */
static void stop_early(struct state *st, struct gt_sink *sink) {
  static int noted;
  int running = 0;
  uint64_t now = gt_now_ns();
  for (int i = 0; i < st->nclients; i++) {
    running += gt_client_running(st->clients[i]);
    gt_client_hangup(st->clients[i], now);
  }
  if (noted || running == 0)
    return;
  noted = 1;
  char text[200];
  snprintf(text, sizeof text,
           "the collector stopped early (%s) while %d traced process%s running: "
           "what they did afterwards is not in the trace",
           strsignal(g_stop), running, running == 1 ? " was" : "es were");
  gt_sink_note(sink, now, 0, GT_F_INCOMPLETE, text);
  gt_collector_say("%s", text);
}

/* A run that ran out of descriptors says what it cost, in the trace (every
 * reader warns, when processes went untraced) and on stderr. */
static void note_fd_shortage(struct gt_sink *sink) {
  if (!gt_fds_last_short())
    return;
  char text[300];
  snprintf(text, sizeof text,
           "the collector ran out of file descriptors (limit %lu, 2 per traced "
           "process): %llu processes ran untraced, %llu waited for one and were "
           "traced; raise its hard limit (ulimit -Hn) to trace more at once",
           gt_fds_limit(), (unsigned long long)gt_fds_told(),
           (unsigned long long)gt_fds_waited());
  gt_sink_note(sink, gt_now_ns(), 0, gt_fds_told() ? GT_F_UNTRACED : 0, text);
  gt_collector_say("%s", text);
}

/* What watches the records the sink takes: live metrics, live profiles. */
struct observers {
  struct gt_prom *prom;
  struct gt_liveprof *live;
  struct gt_control *ctl; /* the flight recorder's triggers */
};

static void observe(void *ctx, const struct gt_record *rec) {
  const struct observers *obs = ctx;
  if (obs->prom)
    gt_prom_observe(obs->prom, rec);
  if (obs->live)
    gt_liveprof_observe(obs->live, rec);
  if (obs->ctl)
    gt_control_observe(obs->ctl, rec);
}

/* Live profiles from the options, else from the environment; an unusable
 * directory stops a collector that was told it on its command line, and
 * is a warning (the trace matters more) for one that inherited it. */
static int start_liveprof(const struct options *o, struct observers *obs, char *err,
                          size_t errlen) {
  const char *dir = o->pprof_dir ? o->pprof_dir : getenv(GT_ENV_PPROF_DIR);
  if (!dir || !*dir)
    return 0;
  uint64_t every = o->pprof_every_ns ? o->pprof_every_ns : gt_knob(GT_KNOB_PPROF_EVERY);
  uint64_t keep = o->pprof_keep_given ? o->pprof_keep : gt_knob(GT_KNOB_PPROF_KEEP);
  obs->live = gt_liveprof_start(dir, every, (unsigned)keep, err, errlen);
  if (obs->live || o->pprof_dir)
    return obs->live ? 0 : -1;
  gt_collector_say("no live profiles: %s", err);
  return 0;
}

static int start_observers(const struct options *o, struct gt_sink *sink,
                           struct observers *obs, char *err, size_t errlen) {
  if (o->prometheus &&
      !(obs->prom = gt_prom_start(o->prometheus, o->webhook, err, errlen)))
    return -1;
  if (start_liveprof(o, obs, err, errlen) != 0) {
    gt_prom_stop(obs->prom);
    return -1;
  }
  if (obs->prom || obs->live || obs->ctl)
    gt_sink_observe(sink, observe, obs);
  return 0;
}

static void run(struct state *st, const struct options *o, int listen_fd,
                struct gt_sink *sink, struct gt_output *out, struct gt_nvml **nvml,
                const struct observers *obs, struct gt_control *ctl) {
  int nvml_started = 0;
  uint64_t last_cut = gt_now_ns();
  st->idle_since_ns = last_cut;
  unsigned moved = 0;
  for (;;) {
    /* One pass: drain every ring, then maybe compress one chunk. Draining
     * must come in batches: a reader right behind the writer bounces every
     * line of the ring between the cores and slows the traced program several
     * times over (docs/PERFORMANCE.md, Earlier history). So after a pass that
     * emptied the rings the loop sleeps a millisecond (a default ring holds
     * ~510,000 launches, a millisecond of even a launch storm), unless
     * compressing a chunk already makes the pause (zstd's rate:
     * docs/PERFORMANCE.md, Collector drain rate). */
    watch(st, listen_fd, sink, moved >= GT_DRAIN_BUDGET || gt_sink_pending(sink) ? 0 : 1);
    accept_clients(st, listen_fd);
    if (!nvml_started && st->ever_connected) { /* sample while something is traced */
      *nvml = gt_nvml_start(sink);
      nvml_started = 1;
      const char *uuid, *model; /* dcgm-exporter's labels on /metrics */
      for (unsigned g = 0; gt_nvml_device(*nvml, g, &uuid, &model); g++)
        gt_prom_gpu_info(obs->prom, g, uuid, model);
    }
    moved = drain_all(st, sink, ctl);
    gt_symq_pace(st->symq, moved, gt_now_ns());
    gt_symq_take(st->symq, sink);
    gt_nvml_take(*nvml, sink, 0);
    if (time_to_compress(st, sink))
      gt_sink_write_one(sink);
    uint64_t now = gt_now_ns();
    gt_tsc_refresh(now);
    gt_prom_publish(obs->prom, now, 0);
    gt_liveprof_tick(obs->live, now);
    gt_output_tick(out, now);
    if (g_roll)
      roll_now(sink, out);
    int snap = g_snap;
    g_snap = 0;
    serve_death(st, ctl);
    gt_control_serve(ctl, snap, gt_prom_alerts(obs->prom), sink, out, now,
                     st->symq); /* the flight recorder's snapshots */
    if (now - last_cut >= GT_CUT_INTERVAL_NS) {
      gt_sink_cut(sink);
      last_cut = now;
    }
    if (g_stop)
      stop_early(st, sink);
    if (!moved && !gt_sink_pending(sink) && !st->died_sig && !gt_control_pending(ctl) &&
        finished(st, o, now))
      return;
  }
}

/* The flight recorder, from --flight-recorder or its knob: its control
 * socket (control.c). 0, or -1 with the reason in err. */
static int start_flight(struct options *o, struct gt_control **ctl, char *err,
                        size_t errlen) {
  if (!o->flight_bytes)
    o->flight_bytes = gt_knob(GT_KNOB_FLIGHT_RECORDER);
  if (!o->flight_bytes)
    return 0;
  if (o->max_bytes) {
    snprintf(err, errlen, "--flight-recorder SIZE is the window's --max-size: not both");
    return -1;
  }
  if (gt_window_by_time(o->flight_bytes)) { /* DURATION: --keep, within the cap */
    if (o->keep_ns) {
      snprintf(err, errlen,
               "--flight-recorder DURATION is the window's --keep: not both");
      return -1;
    }
    o->keep_ns = gt_window_value(o->flight_bytes);
    o->flight_bytes = GT_WINDOW_TIME_CAP_BYTES;
  }
  if (o->output_fd >= 0)
    close(o->output_fd); /* nothing is written there: snapshots go beside it */
  o->output_fd = -1;
  *ctl = gt_control_open(o->socket_path, o->output, err, errlen);
  return *ctl ? 0 : -1;
}

/* --snapshot-webhook: the flight recorder's, on the --prometheus server. */
static int check_webhook(struct options *o, const struct gt_control *ctl, char *err,
                         size_t errlen) {
  if (!o->webhook_text)
    return 0;
  o->webhook = strcmp(o->webhook_text, "any") ? GT_WEBHOOK_LOCAL : GT_WEBHOOK_ANY;
  if (ctl && o->prometheus)
    return 0;
  snprintf(err, errlen,
           "--snapshot-webhook serves POST /snapshot on --prometheus for "
           "--flight-recorder: it needs both");
  return -1;
}

/* The flight recorder's closing line: what it took and what it cost. */
static void say_flight_end(uint64_t records, uint64_t bytes, uint64_t kept) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  fprintf(stderr,
          "gputrace: flight recorder: %llu records, %llu bytes (%.1f bytes/record); "
          "%.1f MiB kept in memory at the end, dropped; collector CPU %.3f s, peak "
          "RSS %.1f MiB\n",
          (unsigned long long)records, (unsigned long long)bytes,
          records ? (double)bytes / (double)records : 0.0, (double)kept / (1 << 20),
          (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
              (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6,
          (double)ru.ru_maxrss / 1024);
}

/* What out_of_memory releases: the socket and its lock file, so that the
 * next collector for this path need not wait for a stale lock. */
static struct listening {
  const char *socket_path;
  int listen_fd, lock_fd;
} g_listening = {NULL, -1, -1};

/* Out of memory, here or in the model's tables (gt_oom): the socket and
 * lock file released, then exit 1; the trace so far stays as written. */
static void out_of_memory(void) {
  fputs("gputrace-collector: out of memory\n", stderr);
  if (g_listening.socket_path)
    gt_unlisten(g_listening.socket_path, g_listening.listen_fd, g_listening.lock_fd);
  _exit(1);
}

int main(int argc, char **argv) {
  struct options o;
  int parsed = parse_options(argc, argv, &o);
  if (parsed != GT_OPTIONS_RUN)
    return parsed;
  setup_signals(o.serve);
  static char force_hint[64]; /* the user of plain LD_PRELOAD has no --force */
  snprintf(force_hint, sizeof force_hint, "%s=1", gt_knob_name(GT_KNOB_FORCE));
  if (o.autospawn)
    gt_out_force_hint(force_hint);

  gt_fds_start(); /* before any descriptor of a client */
  int lock_fd = -1;
  int listen_fd = gt_listen(o.socket_path, &lock_fd, o.serve);
  if (listen_fd < 0)
    return o.autospawn ? 0 : 1; /* autospawn: another collector won the race */
  g_listening = (struct listening){o.socket_path, listen_fd, lock_fd};
  gt_set_oom_handler(out_of_memory);
  char err[512];
  struct gt_control *ctl = NULL;
  if (start_flight(&o, &ctl, err, sizeof err) != 0 ||
      check_webhook(&o, ctl, err, sizeof err) != 0) {
    fprintf(stderr, "gputrace-collector: %s\n", err);
    gt_control_close(ctl);
    gt_unlisten(o.socket_path, listen_fd, lock_fd);
    return 1;
  }
  struct gt_output_opts oo = {.path = o.output,
                              .mode = o.mode,
                              .fd = o.output_fd,
                              .pick = o.pick,
                              .max_bytes = o.max_bytes,
                              .keep_ns = o.keep_ns,
                              .roll_bytes = o.roll_bytes,
                              .flight_bytes = o.flight_bytes};
  struct gt_output *w = gt_output_open(&oo, err, sizeof err);
  if (!w) {
    fprintf(stderr, "gputrace-collector: %s\n", err);
    gt_control_close(ctl);
    gt_unlisten(o.socket_path, listen_fd, lock_fd);
    return 1;
  }
  struct gt_sink *sink = gt_sink_start(w);
  if (!sink)
    out_of_memory();
  struct observers obs = {.ctl = ctl};
  if (start_observers(&o, sink, &obs, err, sizeof err) != 0) {
    fprintf(stderr, "gputrace-collector: %s\n", err);
    gt_control_close(ctl);
    gt_unlisten(o.socket_path, listen_fd, lock_fd);
    gt_sink_stop(sink);
    gt_output_close(w);
    return 1;
  }
  if (o.ready_fd >= 0) {
    ssize_t ignored = write(o.ready_fd, "R", 1);
    (void)ignored;
    close(o.ready_fd);
  }
  struct state *st = calloc(1, sizeof *st);
  if (!st)
    out_of_memory();
  st->control_fd = o.control_fd;
  st->symq = gt_symq_start();
  gt_tsc_calibrate();
  struct gt_nvml *nvml = NULL;
  run(st, &o, listen_fd, sink, w, &nvml, &obs, ctl);
  note_fd_shortage(sink);
  gt_symq_stop(st->symq, sink, GT_SYMQ_STALL_NS);
  gt_nvml_stop(nvml, sink);
  gt_prom_publish(obs.prom, gt_now_ns(), 1);
  gt_liveprof_stop(obs.live);
  obs.live = NULL;
  gt_control_close(ctl);
  gt_unlisten(o.socket_path, listen_fd, lock_fd);
  uint64_t taken = gt_sink_records(sink);
  gt_sink_stop(sink);
  char shown[4200]; /* a rolling set by its base name, else the file written */
  snprintf(shown, sizeof shown, "%s",
           o.max_bytes || o.keep_ns ? o.output : gt_output_path(w));
  const char *werr = gt_output_error(w);
  uint64_t lost = gt_output_lost(w), bytes = gt_output_bytes(w), kept = gt_output_kept(w);
  if (gt_output_deleted(w) && !o.flight_bytes)
    gt_collector_say("%llu oldest files of %s deleted (--max-size/--keep)",
                     (unsigned long long)gt_output_deleted(w), o.output);
  struct gt_graph_cache_stats gs;
  gt_output_graph_stats(w, &gs);
  if (gs.ever_dropped_groups) /* each later file says so too (output.c) */
    gt_collector_say("the graph cache of %s had no room for the making of %llu graph%s "
                     "(%llu records): in files after the ones that made them their "
                     "launches run only what of them the file holds (each file says so)",
                     o.output, (unsigned long long)gs.ever_dropped_groups,
                     gs.ever_dropped_groups == 1 ? "" : "s",
                     (unsigned long long)gs.ever_dropped_records);
  int rc = 0;
  if (werr) {
    fprintf(stderr,
            "gputrace-collector: writing %s failed: %s; %llu records lost, the "
            "trace holds what was written before\n",
            shown, werr, (unsigned long long)lost);
    rc = 1;
  }
  gt_output_close(w);
  gt_prom_stop(obs.prom);
  if (o.flight_bytes && !gt_collector_quiet && !o.autospawn && !st->never_ran)
    say_flight_end(taken - lost, bytes, kept);
  else if (!gt_collector_quiet && !o.autospawn && !st->never_ran) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    uint64_t kept = taken - lost;
    fprintf(stderr,
            "gputrace: %llu records, %llu bytes (%.1f bytes/record) written to %s; "
            "collector CPU %.3f s\n",
            (unsigned long long)kept, (unsigned long long)bytes,
            kept ? (double)bytes / (double)kept : 0.0, shown,
            (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
  }
  free(st);
  return rc;
}
