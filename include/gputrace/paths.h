/* paths.h — where collectors listen. Shared by the shim, collector and CLI.
 *
 * Contract: sockets live in a per-user directory, $XDG_RUNTIME_DIR/gputrace
 * or /tmp/gputrace-<uid>, created 0700; a directory owned by someone else or
 * open to others is refused (another user could otherwise read rings). */
#ifndef GPUTRACE_PATHS_H
#define GPUTRACE_PATHS_H

#include <stddef.h>

/* The socket directory, created if missing. 0, or -1 with a message. */
int gt_socket_dir(char *dir, size_t len, char *err, size_t errlen);

/* A fresh socket path for one recording: <dir>/<tag>-<pid>.sock */
int gt_socket_path(const char *tag, unsigned long id, char *path, size_t len, char *err,
                   size_t errlen);

/* The socket that serves output file `abs_output` under plain LD_PRELOAD:
 * <dir>/out-<hash of the path>.sock, so every process writing one file
 * finds the same collector. */
int gt_socket_for_output(const char *abs_output, char *path, size_t len, char *err,
                         size_t errlen);

#endif
