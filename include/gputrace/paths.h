/* paths.h — where collectors listen. Shared by the shim, collector and CLI.
 *
 * Contract: sockets live in a per-user directory, $XDG_RUNTIME_DIR/gputrace
 * or /tmp/gputrace-<uid>, created 0700 (one opened to others is tightened).
 * When that directory is squatted (another user's, a symbolic link, not a
 * directory) it is never used: a private /tmp/gputrace-<uid>-XXXXXX is made
 * instead (mkdtemp) and the functions return 1 with a note in err, for the
 * caller to show. Unrelated processes then do not share a collector
 * (descendants still do: they inherit GPUTRACE_SOCKET). 0: the usual
 * directory; -1: no directory, with the reason in err. */
#ifndef GPUTRACE_PATHS_H
#define GPUTRACE_PATHS_H

#include <stddef.h>

/* The socket directory's name, nothing created or checked: 0, or -1 when
 * it does not fit. */
int gt_socket_dir_name(char *dir, size_t len);

/* The socket directory, created if missing. */
int gt_socket_dir(char *dir, size_t len, char *err, size_t errlen);

/* 1 for a private fallback directory (its collector removes it at the end). */
int gt_socket_dir_is_private(const char *dir);

/* A fresh socket path for one recording: <dir>/<tag>-<pid>.sock */
int gt_socket_path(const char *tag, unsigned long id, char *path, size_t len, char *err,
                   size_t errlen);

/* The socket that serves output file `abs_output` under plain LD_PRELOAD:
 * <dir>/out-<hash of the path>.sock, so every process writing one file
 * finds the same collector. */
int gt_socket_for_output(const char *abs_output, char *path, size_t len, char *err,
                         size_t errlen);

/* The stand-alone collector (`gputrace collect --socket-dir DIR`) listens
 * on DIR/collector.sock, with its lock file beside it, for every traced
 * process that finds it there (GPUTRACE_SOCKET_DIR, or the socket
 * directory): one collector for a pod (docs/kubernetes.md). */
#define GT_POD_SOCKET_NAME "collector.sock"

/* DIR/collector.sock in path: 0, or -1 when it does not fit a socket. */
int gt_pod_socket(const char *dir, char *path, size_t len);

/* 1 when a collector runs for socket_path: the path is a socket of ours and
 * its lock file is held (collector/listen.c); asks without connecting, so
 * the collector sees nothing. No allocation. */
int gt_collector_listens(const char *socket_path);

/* The control socket of collector `pid` (a flight recorder: protocol.h)
 * whose data socket is `data_socket`: <its directory>/control-<pid>.sock.
 * 0, or -1 when that does not fit in len. */
int gt_control_socket_path(const char *data_socket, unsigned long pid, char *path,
                           size_t len);

/* A file next to the running program, <its directory>/<rel> (rel may
 * climb: "../lib/libgputrace.so"), or the path in environment variable env
 * when that is set: in out, 0 when access(mode) allows it, else -1. The
 * CLI finds its collector and shim so. */
int gt_beside_self(const char *env, const char *rel, int mode, char *out, size_t len);

/* What one read of /proc/PID/WHAT gives (its stat, cmdline, ...: files
 * the kernel makes in one read), at most len - 1 bytes into buf, which is
 * NUL-terminated: the bytes read, or -1 when it cannot be read. */
long gt_read_proc(unsigned long pid, const char *what, char *buf, size_t len);

#endif
