/* cmd_snapshot.c — `gputrace snapshot [-o FILE] [--force] [--last DURATION]
 * TARGET`: the window a flight recorder keeps (record --flight-recorder,
 * GPUTRACE_FLIGHT_RECORDER), written as one ordinary trace.
 *
 * Contract:
 *  - TARGET is the collector's pid or its control socket (a path). For a
 *    pid, the socket is the one beside the data socket its command line
 *    names (/proc/PID/cmdline, --socket), else in the usual socket
 *    directory (paths.h: control-PID.sock). The collector must run as our
 *    uid (SO_PEERCRED; it checks ours too), and for a pid be that pid.
 *  - FILE is created here by outfile.h's rules (default: the first free
 *    gputrace-snapshot-N.gtrace) and handed to the collector as a
 *    descriptor (protocol.h): it writes the snapshot into it. A snapshot
 *    that failed leaves no file.
 *  - --last DURATION keeps exactly the records stamped within DURATION of
 *    now: the collector cuts the window there (collector/flight.c).
 *  - gt_ctl_connect, gt_ctl_ask, gt_ctl_open_output, gt_ctl_drop_output
 *    and gt_ctl_why (commands.h) are the control socket's client, and the
 *    file a request hands over: cmd_start.c's too.
 *  - Status: 0 written (one line on stderr saying what), 2 for bad usage
 *    and a TARGET that is no flight recorder of ours, 1 when the collector
 *    could not write it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "commands.h"
#include "gputrace/outfile.h"
#include "gputrace/paths.h"
#include "gputrace/protocol.h"
#include "shared_options.h"

#define REPLY_WAIT_MS 600000 /* a window of GiBs takes its time */

/* The --socket value of collector pid's command line into buf, or 0. */
static int socket_of_pid(unsigned long pid, char *buf, size_t len) {
  char args[8192];
  long n = gt_read_proc(pid, "cmdline", args, sizeof args);
  if (n <= 0)
    return 0;
  for (char *a = args; a < args + n; a += strlen(a) + 1)
    if (!strcmp(a, "--socket") && a + strlen(a) + 1 < args + n) {
      snprintf(buf, len, "%s", a + strlen(a) + 1);
      return 1;
    }
  return 0;
}

/* TARGET's control socket path; *pid the pid it names (0: a path). */
static int control_path(const char *target, char *path, size_t len, unsigned long *pid) {
  char *end, data[4096], err[256];
  *pid = strtoul(target, &end, 10);
  if (!*target || *end || !*pid) {
    *pid = 0;
    snprintf(path, len, "%s", target);
    return strlen(target) < len ? 0 : -1;
  }
  if (!socket_of_pid(*pid, data, sizeof data)) {
    if (gt_socket_dir(data, sizeof data - 2, err, sizeof err) < 0)
      return -1;
    strcat(data, "/x");
  }
  return gt_control_socket_path(data, *pid, path, len);
}

int gt_ctl_connect(const char *prog, const char *target) {
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  unsigned long pid;
  if (control_path(target, addr.sun_path, sizeof addr.sun_path, &pid) != 0) {
    fprintf(stderr, "%s: %s: no control socket path for it\n", prog, target);
    return -1;
  }
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0 || connect(s, (struct sockaddr *)&addr, sizeof addr) != 0) {
    fprintf(stderr,
            "%s: %s is no flight recorder: %s: %s (a gputrace-collector "
            "started with --flight-recorder listens there)\n",
            prog, target, addr.sun_path, strerror(errno));
    if (s >= 0)
      close(s);
    return -1;
  }
  struct ucred cred;
  socklen_t clen = sizeof cred;
  if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 ||
      cred.uid != geteuid() || (pid && (unsigned long)cred.pid != pid)) {
    fprintf(stderr, "%s: %s: %s is not served by %s of your user\n", prog, target,
            addr.sun_path, pid ? "that collector" : "a collector");
    close(s);
    return -1;
  }
  return s;
}

int gt_ctl_ask(int s, const char *line, int fd, char *reply, size_t len) {
  char cbuf[CMSG_SPACE(sizeof(int))] = {0};
  ssize_t n = (ssize_t)strlen(line);
  struct iovec iov = {(char *)line, (size_t)n};
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  if (fd >= 0) {
    msg.msg_control = cbuf;
    msg.msg_controllen = sizeof cbuf;
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &fd, sizeof fd);
  }
  if (sendmsg(s, &msg, MSG_NOSIGNAL) != n)
    return snprintf(reply, len, "error cannot ask: %s", strerror(errno)), -1;
  struct pollfd p = {.fd = s, .events = POLLIN};
  size_t got = 0;
  while (got + 1 < len && poll(&p, 1, REPLY_WAIT_MS) == 1) {
    ssize_t r = read(s, reply + got, len - 1 - got);
    if (r <= 0)
      break;
    got += (size_t)r;
    if (memchr(reply, '\n', got))
      break;
  }
  reply[got] = '\0';
  reply[strcspn(reply, "\n")] = '\0';
  return got ? 0 : (snprintf(reply, len, "error no answer from the collector"), -1);
}

int gt_ctl_open_output(const char *prog, const char *prefix, const char **output,
                       int force, char *picked, size_t len) {
  char err[512];
  int fd = *output
               ? gt_out_open(*output, force ? GT_OUT_FORCE : GT_OUT_NEW, err, sizeof err)
               : gt_out_pick(prefix, 1, ".gtrace", picked, len, err, sizeof err);
  if (!*output)
    *output = picked;
  if (fd < 0)
    fprintf(stderr, "%s: %s\n", prog, err);
  return fd;
}

void gt_ctl_drop_output(int fd, const char *output) {
  if (ftruncate(fd, 0) == 0) /* ours, just created (or forced): no half trace */
    unlink(output);
  close(fd);
}

const char *gt_ctl_why(const char *reply) {
  return strncmp(reply, "error ", 6) ? reply : reply + 6;
}

int cmd_snapshot(int argc, char **argv) {
  const char *output = NULL;
  int force = 0, nargs;
  uint64_t last_ns = 0;
  const struct gt_option options[] = {
      GT_OPT_OUTPUT(&output, "FILE", "the trace (default: gputrace-snapshot-N.gtrace)"),
      GT_OPT_FORCE(&force),
      GT_OPT_DURATION(0, "last", &last_ns, "DURATION",
                      "only the records of the last DURATION"),
      GT_OPT_END,
  };
  const struct gt_command cmd = {
      .prog = "gputrace snapshot",
      .options = options,
      .args = "TARGET",
      .min_args = 1,
      .max_args = 1,
      .about = "write what a flight recorder keeps (TARGET: its pid or socket)"};
  int st = gt_options_parse(&cmd, argc, argv, &nargs);
  if (st != GT_OPTIONS_RUN)
    return st;
  const char *target = argv[0];
  int s = gt_ctl_connect("gputrace snapshot", target);
  if (s < 0)
    return 2;
  char picked[64], reply[GT_CTL_LINE_MAX];
  int fd = gt_ctl_open_output(cmd.prog, "gputrace-snapshot-", &output, force, picked,
                              sizeof picked);
  if (fd < 0) {
    close(s);
    return 2;
  }
  char line[64];
  snprintf(line, sizeof line, GT_CTL_SNAPSHOT " %llu\n", (unsigned long long)last_ns);
  int rc = gt_ctl_ask(s, line, fd, reply, sizeof reply);
  close(s);
  unsigned long long records, bytes, segments, span_ns;
  if (rc == 0 && sscanf(reply, "ok %llu %llu %llu %llu", &records, &bytes, &segments,
                        &span_ns) == 4) {
    close(fd);
    fprintf(stderr,
            "gputrace snapshot: %llu records (%llu segment%s, %.1f s) written to %s%s\n",
            records, segments, segments == 1 ? "" : "s", (double)span_ns / 1e9, output,
            records ? "" : " (the recorder holds nothing yet)");
    return 0;
  }
  gt_ctl_drop_output(fd, output);
  fprintf(stderr, "gputrace snapshot: %s: %s\n", target, gt_ctl_why(reply));
  return 1;
}
