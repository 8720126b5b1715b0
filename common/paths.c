/* paths.c — see include/gputrace/paths.h. Uses no allocation: the shim
 * calls it from inside the traced process. */
#include "gputrace/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* 0 when `dir` is a directory of ours that others cannot enter (tightened
 * to 0700 if needed), else -1 with the reason. */
static int check_dir(const char *dir, char *err, size_t errlen) {
  struct stat st;
  if (lstat(dir, &st) != 0) {
    snprintf(err, errlen, "cannot use socket directory %s: %s", dir, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
    snprintf(err, errlen, "socket directory %s is not a directory owned by uid %u", dir,
             (unsigned)geteuid());
    return -1;
  }
  if ((st.st_mode & 077) != 0 && chmod(dir, 0700) != 0) {
    snprintf(err, errlen, "socket directory %s is open to other users", dir);
    return -1;
  }
  return 0;
}

/* The usual directory is squatted (another user's, a symbolic link, a
 * file): make a private one instead, /tmp/gputrace-<uid>-XXXXXX (mkdtemp:
 * 0700, ours, a fresh name). Returns 1 with a note in err, or -1. */
static int private_dir(char *dir, size_t len, char *err, size_t errlen) {
  char why[200];
  snprintf(why, sizeof why, "%s", err);
  int n = snprintf(dir, len, "/tmp/gputrace-%u-XXXXXX", (unsigned)geteuid());
  if (n < 0 || (size_t)n >= len || !mkdtemp(dir)) {
    snprintf(err, errlen, "%s, and no private directory could be made", why);
    return -1;
  }
  snprintf(err, errlen, "%s; using %s", why, dir);
  return 1;
}

int gt_socket_dir_name(char *dir, size_t len) {
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  struct stat st;
  int n;
  if (xdg && xdg[0] == '/' && stat(xdg, &st) == 0 && S_ISDIR(st.st_mode) &&
      access(xdg, W_OK) == 0)
    n = snprintf(dir, len, "%s/gputrace", xdg);
  else
    n = snprintf(dir, len, "/tmp/gputrace-%u", (unsigned)geteuid());
  return n < 0 || (size_t)n >= len ? -1 : 0;
}

int gt_socket_dir(char *dir, size_t len, char *err, size_t errlen) {
  if (gt_socket_dir_name(dir, len) != 0) {
    snprintf(err, errlen, "socket directory path too long");
    return -1;
  }
  if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
    snprintf(err, errlen, "cannot create socket directory %s: %s", dir, strerror(errno));
    return -1;
  }
  if (check_dir(dir, err, errlen) == 0)
    return 0;
  return private_dir(dir, len, err, errlen);
}

int gt_socket_dir_is_private(const char *dir) {
  char prefix[48];
  int n = snprintf(prefix, sizeof prefix, "/tmp/gputrace-%u-", (unsigned)geteuid());
  return n > 0 && strncmp(dir, prefix, (size_t)n) == 0 && strlen(dir) == (size_t)n + 6 &&
         !strchr(dir + n, '/');
}

int gt_socket_path(const char *tag, unsigned long id, char *path, size_t len, char *err,
                   size_t errlen) {
  char dir[160];
  int rc = gt_socket_dir(dir, sizeof dir, err, errlen);
  if (rc < 0)
    return -1;
  int n = snprintf(path, len, "%s/%s-%lu.sock", dir, tag, id);
  if (n < 0 || (size_t)n >= len || (size_t)n >= 108) {
    snprintf(err, errlen, "socket path too long under %s", dir);
    return -1;
  }
  return rc;
}

int gt_socket_for_output(const char *abs_output, char *path, size_t len, char *err,
                         size_t errlen) {
  uint64_t hash = 1469598103934665603ull;
  for (const unsigned char *p = (const unsigned char *)abs_output; *p; p++)
    hash = (hash ^ *p) * 1099511628211ull;
  char dir[160];
  int rc = gt_socket_dir(dir, sizeof dir, err, errlen);
  if (rc < 0)
    return -1;
  int n = snprintf(path, len, "%s/out-%016llx.sock", dir, (unsigned long long)hash);
  if (n < 0 || (size_t)n >= len || (size_t)n >= 108) {
    snprintf(err, errlen, "socket path too long under %s", dir);
    return -1;
  }
  return rc;
}

int gt_pod_socket(const char *dir, char *path, size_t len) {
  int n = snprintf(path, len, "%s/" GT_POD_SOCKET_NAME, dir);
  return n > 0 && (size_t)n < len && (size_t)n < 108 ? 0 : -1;
}

int gt_collector_listens(const char *socket_path) {
  char lock[128];
  struct stat st;
  int n = snprintf(lock, sizeof lock, "%s.lock", socket_path);
  if (n < 0 || (size_t)n >= sizeof lock || lstat(socket_path, &st) != 0 ||
      !S_ISSOCK(st.st_mode) || st.st_uid != geteuid())
    return 0;
  int fd = open(lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0)
    return 0;
  /* Held by its collector for as long as it runs (collector/listen.c): a
   * shared lock we get means nobody holds it. */
  int held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd);
  return held;
}

int gt_control_socket_path(const char *data_socket, unsigned long pid, char *path,
                           size_t len) {
  const char *slash = strrchr(data_socket, '/');
  int dir_len = slash ? (int)(slash - data_socket) : 1;
  int n = snprintf(path, len, "%.*s/control-%lu.sock", dir_len, slash ? data_socket : ".",
                   pid);
  return n < 0 || (size_t)n >= len ? -1 : 0;
}

long gt_read_proc(unsigned long pid, const char *what, char *buf, size_t len) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%lu/%s", pid, what);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 && len > 0 ? read(fd, buf, len - 1) : -1;
  if (fd >= 0)
    close(fd);
  if (n >= 0)
    buf[n] = '\0';
  return n;
}

int gt_beside_self(const char *env, const char *rel, int mode, char *out, size_t len) {
  const char *v = getenv(env);
  if (v && *v) {
    int w = snprintf(out, len, "%s", v);
    return w > 0 && (size_t)w < len && access(out, mode) == 0 ? 0 : -1;
  }
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return -1;
  self[n] = '\0';
  char *slash = strrchr(self, '/');
  if (slash)
    *slash = '\0';
  int w = snprintf(out, len, "%s/%s", self, rel);
  return w > 0 && (size_t)w < len && access(out, mode) == 0 ? 0 : -1;
}
