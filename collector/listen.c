/* listen.c — the collector's socket and its lock file (see collector.h).
 *
 * A lock file beside the socket serializes collectors racing for one path
 * (plain LD_PRELOAD: every process of a run computes the same path); a
 * stale socket (nobody accepting) is replaced. The lock file is removed
 * when the collector ends, out of memory included (main.c), so none
 * accumulate; one left by a crash holds no lock (flock ends with its
 * process) and is taken over. A collector that locked a file its owner
 * removed meanwhile sees that the path no longer names what it locked and
 * tries again with the new one. A stand-alone collector (--serve) waits
 * out a lock held for a moment and names the collector holding it longer.
 * A private socket directory (the fallback when the usual one is squatted:
 * paths.h) is removed too. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"
#include "gputrace/paths.h"

static void lock_path_of(const char *path, char *lock, size_t len) {
  snprintf(lock, len, "%s.lock", path);
}

/* The lock on `lock`, or -1 (another collector holds it, or an error).
 * Patient: a lock held for a moment is waited for (a shim asking whether a
 * stand-alone collector runs holds it for a few system calls: paths.h),
 * one held for 200 ms is another collector's. */
static int take_lock(const char *lock, int patient) {
  for (int attempt = 0, busy = 0; attempt < 8; attempt++) {
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int why = errno;
      if (fd >= 0)
        close(fd);
      if (why == EWOULDBLOCK && patient && busy++ < 20) {
        struct timespec pause = {0, 10000000};
        nanosleep(&pause, NULL);
        attempt--;
        continue;
      }
      if (why != EWOULDBLOCK)
        gt_collector_say("cannot lock %s: %s", lock, strerror(why));
      else if (patient)
        fprintf(stderr, "gputrace-collector: another collector listens on %.*s\n",
                (int)(strlen(lock) - 5), lock);
      return -1;
    }
    struct stat held, named;
    if (fstat(fd, &held) == 0 && stat(lock, &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino)
      return fd;
    close(fd); /* its owner removed it after we opened it: take the new one */
  }
  return -1;
}

int gt_listen(const char *path, int *lock_fd, int patient) {
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof addr.sun_path) {
    fprintf(stderr, "gputrace-collector: socket path too long: %s\n", path);
    return -1;
  }
  snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path);
  char lock[PATH_MAX];
  lock_path_of(path, lock, sizeof lock);
  if ((*lock_fd = take_lock(lock, patient)) < 0)
    return -1; /* another collector owns this path */
  /* Non-blocking: the loop accepts until none is pending. */
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  unlink(path);
  if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
      listen(fd, 128) != 0) {
    fprintf(stderr, "gputrace-collector: cannot listen on %s: %s\n", path,
            strerror(errno));
    if (fd >= 0)
      close(fd);
    gt_unlisten(path, -1, *lock_fd);
    return -1;
  }
  chmod(path, 0600);
  return fd;
}

void gt_unlisten(const char *path, int listen_fd, int lock_fd) {
  if (listen_fd >= 0) {
    unlink(path);
    close(listen_fd);
  }
  char lock[PATH_MAX];
  lock_path_of(path, lock, sizeof lock);
  unlink(lock); /* still ours: nobody else can hold it */
  close(lock_fd);
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash) {
    *slash = '\0';
    if (gt_socket_dir_is_private(dir))
      rmdir(dir); /* only when empty: its other sockets are still in use */
  }
}
