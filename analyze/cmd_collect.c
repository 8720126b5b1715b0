/* cmd_collect.c — `gputrace collect --socket-dir DIR -o FILE [--prometheus
 * ADDR:PORT] [--max-size SIZE] [--keep DURATION] [--roll-size SIZE] [-q]`
 *
 * The stand-alone collector: one for every traced process of a pod, a
 * node or a user (docs/kubernetes.md). It becomes gputrace-collector (exec:
 * same pid, so the SIGTERM a container runtime sends reaches it) listening
 * on DIR/collector.sock (paths.h), with --serve: it serves every process
 * that connects, any number over time, and runs until SIGTERM, SIGHUP or
 * SIGINT, then finishes the trace (collector/main.c). The shim of a
 * process started without GPUTRACE_SOCKET connects there when
 * GPUTRACE_SOCKET_DIR names DIR, or DIR is its socket directory and no
 * GPUTRACE_OUTPUT is set, and starts no collector of its own
 * (preload/transport.c).
 *
 * DIR is created (0700) when missing; it may be shared (an emptyDir, a
 * hostPath): the socket is 0600 and both sides check the other is of their
 * uid. Exit status: 2 for usage errors, an unusable DIR or no
 * gputrace-collector; else the collector's: 0, or 1 (with its message) when
 * another collector listens in DIR, FILE cannot be created (an existing one
 * only with --force) or the trace could not be written whole. Options are
 * checked here, before the collector runs, and passed on as given.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "gputrace/paths.h"
#include "gputrace/protocol.h"
#include "shared_options.h"

/* Collector options passed on as given (shared_options.h). */
enum { PASS_COUNT = GT_PASS_ROLLING };
static const char *const pass_flag[PASS_COUNT] = {GT_PASS_ROLLING_FLAGS};

struct collect_opts {
  const char *socket_dir;
  const char *output;
  const char *prometheus;
  const char *pass[PASS_COUNT]; /* NULL: not given */
  int force;
  int quiet;
};

static int parse(int argc, char **argv, struct collect_opts *o) {
  int nargs;
  const struct gt_option options[] = {
      {.name = "socket-dir",
       .type = GT_OPTION_STRING,
       .arg = "DIR",
       .help = "listen on DIR/" GT_POD_SOCKET_NAME " (made if missing)",
       .value = GT_OPT_VALUE_PTR(&o->socket_dir, const char *),
       .flags = GT_OPTION_REQUIRED},
      {.name = "output", /* GT_OPT_OUTPUT's, required */
       .short_name = 'o',
       .type = GT_OPTION_STRING,
       .arg = "FILE",
       .help = "the trace (or a rolling set's base name)",
       .value = GT_OPT_VALUE_PTR(&o->output, const char *),
       .flags = GT_OPTION_REQUIRED},
      GT_OPT_FORCE(&o->force),
      GT_OPT_PROMETHEUS(&o->prometheus),
      GT_OPT_ROLLING(pass_flag, o->pass),
      GT_OPT_FLAG('q', "quiet", &o->quiet, "no messages but errors"),
      GT_OPT_END,
  };
  const struct gt_command cmd = {
      .prog = "gputrace collect",
      .options = options,
      .about = "trace every process that connects, until SIGTERM or SIGINT"};
  return gt_options_parse(&cmd, argc, argv, &nargs);
}

/* DIR made if missing (0700: the socket directory of one user), then
 * checked to be a directory we can write. NULL, or why not. */
static const char *usable_dir(const char *dir) {
  struct stat st;
  if (mkdir(dir, 0700) != 0 && errno != EEXIST)
    return strerror(errno);
  if (stat(dir, &st) != 0)
    return strerror(errno);
  if (!S_ISDIR(st.st_mode))
    return "not a directory";
  return access(dir, W_OK | X_OK) == 0 ? NULL : strerror(errno);
}

int cmd_collect(int argc, char **argv) {
  struct collect_opts o = {0};
  int rc = parse(argc, argv, &o);
  if (rc != GT_OPTIONS_RUN)
    return rc;
  char collector[PATH_MAX], socket_path[128];
  if (gt_beside_self(GT_ENV_COLLECTOR, "gputrace-collector", X_OK, collector,
                     sizeof collector) != 0) {
    fprintf(stderr, "gputrace collect: cannot find gputrace-collector next to this "
                    "program (set GPUTRACE_COLLECTOR)\n");
    return 2;
  }
  const char *why = usable_dir(o.socket_dir);
  if (!why && gt_pod_socket(o.socket_dir, socket_path, sizeof socket_path) != 0)
    why = "too long for a socket path";
  if (why) {
    fprintf(stderr, "gputrace collect: cannot listen in %s: %s\n", o.socket_dir, why);
    return 2;
  }
  const char *args[24] = {collector,
                          "--serve",
                          "--socket",
                          socket_path,
                          "--output",
                          o.output,
                          o.force ? "--force" : "--new"};
  int n = 7;
  if (o.prometheus)
    args[n++] = "--prometheus", args[n++] = o.prometheus;
  for (int i = 0; i < PASS_COUNT; i++)
    if (o.pass[i])
      args[n++] = pass_flag[i], args[n++] = o.pass[i];
  if (o.quiet)
    args[n++] = "--quiet";
  args[n] = NULL;
  unsetenv("LD_PRELOAD"); /* the collector is never traced */
  setenv(GT_ENV_DISABLE, "1", 1);
  execv(collector, (char *const *)args);
  fprintf(stderr, "gputrace collect: cannot run %s: %s\n", collector, strerror(errno));
  return 2;
}
