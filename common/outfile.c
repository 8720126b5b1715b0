/* outfile.c — see include/gputrace/outfile.h. */
#include "gputrace/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUT_FLAGS (O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
#define PICK_TRIES 100000u

/* How the front end overwrites a file (gt_out_force_hint). */
static const char *g_force_hint = "--force";

void gt_out_force_hint(const char *how) {
  g_force_hint = how;
}

static int fail(char *err, size_t errlen, const char *path, const char *why) {
  snprintf(err, errlen, "cannot write %s: %s", path, why);
  return -1;
}

/* The message for a failed open; errno is kept for the caller. */
static int open_failed(const char *path, char *err, size_t errlen) {
  int saved = errno;
  char why[96];
  if (saved == ELOOP)
    fail(err, errlen, path, "it is a symbolic link (not followed)");
  else if (saved == EISDIR) /* no force takes a directory: no hint */
    fail(err, errlen, path, "it is a directory");
  else if (saved == EEXIST) {
    snprintf(why, sizeof why,
             "it exists (not overwritten; %s overwrites a file of yours)", g_force_hint);
    fail(err, errlen, path, why);
  } else
    fail(err, errlen, path, strerror(saved));
  errno = saved;
  return -1;
}

/* Descriptor ready for writing: blocking again. */
static int ready(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0)
    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  return fd;
}

/* An existing file we may overwrite or append to: a regular file of ours
 * with one link. 0, or -1 with the reason. */
static int ours_stat(const struct stat *st, const char *path, char *err, size_t errlen) {
  char why[96];
  if (!S_ISREG(st->st_mode))
    return fail(err, errlen, path, "not a regular file");
  if (st->st_uid != geteuid()) {
    snprintf(why, sizeof why, "it is owned by uid %u, not by us", (unsigned)st->st_uid);
    return fail(err, errlen, path, why);
  }
  if (st->st_nlink != 1) {
    snprintf(why, sizeof why, "it has %lu links (another name for it exists)",
             (unsigned long)st->st_nlink);
    return fail(err, errlen, path, why);
  }
  return 0;
}

static int ours(int fd, const char *path, char *err, size_t errlen) {
  struct stat st;
  if (fstat(fd, &st) != 0)
    return fail(err, errlen, path, strerror(errno));
  return ours_stat(&st, path, err, errlen);
}

/* lstat found st at path: a symbolic link, a directory, or (GT_OUT_NEW) a
 * name taken by anything but a device is refused, errno set. */
static int refused_kind(const struct stat *st, const char *path, enum gt_out_mode mode,
                        char *err, size_t errlen) {
  errno = S_ISLNK(st->st_mode) ? ELOOP : S_ISDIR(st->st_mode) ? EISDIR : EEXIST;
  if (S_ISLNK(st->st_mode) || S_ISDIR(st->st_mode) ||
      (mode == GT_OUT_NEW && !S_ISCHR(st->st_mode)))
    return open_failed(path, err, errlen);
  return 0;
}

/* Open what exists at `path` for overwriting or appending: a character
 * device as it is, else a file of ours (truncated for GT_OUT_FORCE), mode
 * 0600. -1 with errno ENOENT when it vanished meanwhile (try again), other
 * -1 with the message in err. */
static int open_existing(const char *path, enum gt_out_mode mode, char *err,
                         size_t errlen) {
  struct stat st;
  if (lstat(path, &st) != 0)
    return errno == ENOENT ? -1 : open_failed(path, err, errlen);
  if (refused_kind(&st, path, mode, err, errlen) != 0)
    return -1;
  int fd = open(path, OUT_FLAGS | (mode == GT_OUT_APPEND ? O_APPEND : 0));
  if (fd < 0)
    return errno == ENOENT ? -1 : open_failed(path, err, errlen);
  if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode))
    return ready(fd); /* /dev/null, /dev/full: nobody's file to protect */
  /* Refusals below leave errno EEXIST: not a reason to try again. */
  if (mode == GT_OUT_NEW) {
    close(fd);
    errno = EEXIST;
    return open_failed(path, err, errlen);
  }
  if (ours(fd, path, err, errlen) != 0) {
    close(fd);
    errno = EEXIST;
    return -1;
  }
  if ((mode == GT_OUT_FORCE && ftruncate(fd, 0) != 0) || fchmod(fd, 0600) != 0) {
    int saved = errno;
    close(fd);
    fail(err, errlen, path, strerror(saved));
    errno = EEXIST;
    return -1;
  }
  return ready(fd);
}

int gt_out_open(const char *path, enum gt_out_mode mode, char *err, size_t errlen) {
  for (int attempt = 0; attempt < 4; attempt++) {
    int fd = open(path, OUT_FLAGS | O_CREAT | O_EXCL, 0600);
    if (fd >= 0)
      return ready(fd);
    if (errno != EEXIST)
      return open_failed(path, err, errlen);
    fd = open_existing(path, mode, err, errlen);
    if (fd >= 0 || errno != ENOENT)
      return fd < 0 ? -1 : fd;
  }
  return fail(err, errlen, path, "it keeps changing");
}

int gt_out_check(const char *path, enum gt_out_mode mode, char *err, size_t errlen) {
  struct stat st;
  if (lstat(path, &st) != 0)
    return errno == ENOENT ? 0 : open_failed(path, err, errlen);
  if (refused_kind(&st, path, mode, err, errlen) != 0)
    return -1;
  if (S_ISCHR(st.st_mode) || ours_stat(&st, path, err, errlen) == 0)
    return 0;
  errno = EEXIST;
  return -1;
}

int gt_out_pick(const char *prefix, unsigned first, const char *suffix, char *chosen,
                size_t chosen_len, char *err, size_t errlen) {
  for (unsigned n = first; n < first + PICK_TRIES; n++) {
    int len = snprintf(chosen, chosen_len, "%s%u%s", prefix, n, suffix);
    if (len < 0 || (size_t)len >= chosen_len)
      return fail(err, errlen, prefix, "name too long");
    int fd = open(chosen, OUT_FLAGS | O_CREAT | O_EXCL, 0600);
    if (fd >= 0)
      return ready(fd);
    if (errno != EEXIST)
      return open_failed(chosen, err, errlen);
  }
  return fail(err, errlen, chosen, "no free name");
}
