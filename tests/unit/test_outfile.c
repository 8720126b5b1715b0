/* test_outfile.c — outputs are never followed into someone else's file
 * (include/gputrace/outfile.h): a symbolic link is refused in every mode,
 * an existing file unless forced, and then only a regular file of ours with
 * one link (truncated, 0600); FIFOs are refused without blocking; devices
 * are written as they are; picked names skip whatever is there. A refusal
 * says how to overwrite only where something can: the front end's own
 * hint for a name taken, none for a directory. gt_out_check refuses what
 * gt_out_open refuses, with the same message, and changes nothing. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "gputrace/outfile.h"

static char dir[] = "/tmp/gt_outfile_XXXXXX";

static void path_of(char *out, const char *name) {
  snprintf(out, 256, "%s/%s", dir, name);
}

static void write_file(const char *path, const char *text, mode_t mode) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
  CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
  close(fd);
  chmod(path, mode);
}

/* gt_out_open refuses path with `why`, and gt_out_check (asked first)
 * says the same. */
static int refused(const char *path, enum gt_out_mode mode, const char *why) {
  char err[512] = "";
  if (gt_out_check(path, mode, err, sizeof err) == 0 || !strstr(err, path) ||
      !strstr(err, why)) {
    fprintf(stderr, "check, mode %d on %s: err '%s' (want '%s')\n", mode, path, err, why);
    return 0;
  }
  err[0] = '\0';
  int fd = gt_out_open(path, mode, err, sizeof err);
  if (fd >= 0)
    close(fd);
  int ok = fd < 0 && strstr(err, path) && strstr(err, why);
  if (!ok)
    fprintf(stderr, "mode %d on %s: fd %d, err '%s' (want '%s')\n", mode, path, fd, err,
            why);
  return ok;
}

static void test_links_and_existing(void) {
  char victim[256], lnk[256], path[256];
  path_of(victim, "victim");
  path_of(lnk, "link.gtrace");
  write_file(victim, "precious\n", 0644);
  CHECK(symlink(victim, lnk) == 0);
  for (int m = GT_OUT_NEW; m <= GT_OUT_APPEND; m++)
    CHECK(refused(lnk, (enum gt_out_mode)m, "symbolic link"));
  struct stat st;
  CHECK(stat(victim, &st) == 0 && st.st_size == 9);

  path_of(path, "mine.gtrace");
  write_file(path, "old trace", 0666);
  CHECK(refused(path, GT_OUT_NEW, "it exists"));
  char err[256];
  int fd = gt_out_open(path, GT_OUT_FORCE, err, sizeof err);
  CHECK(fd >= 0);
  CHECK(fstat(fd, &st) == 0 && st.st_size == 0 && (st.st_mode & 0777) == 0600);
  CHECK((fcntl(fd, F_GETFL) & O_NONBLOCK) == 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC));
  close(fd);

  char other[256];
  path_of(other, "other-name");
  CHECK(link(path, other) == 0);
  CHECK(refused(path, GT_OUT_FORCE, "2 links"));
  CHECK(refused(path, GT_OUT_APPEND, "2 links"));
  if (geteuid() == 0) {
    char theirs[256];
    path_of(theirs, "theirs.gtrace");
    write_file(theirs, "x", 0666);
    CHECK(chown(theirs, 65534, 65534) == 0);
    CHECK(refused(theirs, GT_OUT_FORCE, "owned by uid 65534"));
    CHECK(refused(theirs, GT_OUT_APPEND, "owned by uid 65534"));
  }
}

static void test_special_files(void) {
  char fifo[256], err[256];
  path_of(fifo, "fifo.gtrace");
  CHECK(mkfifo(fifo, 0600) == 0);
  CHECK(refused(fifo, GT_OUT_NEW, "it exists"));
  CHECK(refused(fifo, GT_OUT_FORCE, "not a regular file")); /* and no hang */
  CHECK(refused(fifo, GT_OUT_APPEND, "not a regular file"));
  int fd = gt_out_open("/dev/null", GT_OUT_NEW, err, sizeof err);
  CHECK(fd >= 0 && write(fd, "x", 1) == 1);
  close(fd);
}

static void test_append_and_create(void) {
  char path[256], err[256];
  path_of(path, "append.gtrace");
  int fd = gt_out_open(path, GT_OUT_APPEND, err, sizeof err); /* created */
  CHECK(fd >= 0 && write(fd, "ab", 2) == 2);
  close(fd);
  fd = gt_out_open(path, GT_OUT_APPEND, err, sizeof err); /* kept */
  CHECK(fd >= 0 && write(fd, "cd", 2) == 2);
  close(fd);
  struct stat st;
  CHECK(stat(path, &st) == 0 && st.st_size == 4 && (st.st_mode & 0777) == 0600);
  char made[256];
  path_of(made, "new.gtrace");
  fd = gt_out_open(made, GT_OUT_NEW, err, sizeof err);
  CHECK(fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0600);
  close(fd);
}

/* gt_out_check takes what gt_out_open would, and changes nothing. */
static void test_check(void) {
  char path[256], err[256] = "";
  struct stat st;
  path_of(path, "checked.csv");
  CHECK(gt_out_check(path, GT_OUT_NEW, err, sizeof err) == 0);
  CHECK(lstat(path, &st) != 0 && errno == ENOENT); /* not created */
  write_file(path, "kept", 0644);
  CHECK(gt_out_check(path, GT_OUT_FORCE, err, sizeof err) == 0);
  CHECK(stat(path, &st) == 0 && st.st_size == 4 && (st.st_mode & 0777) == 0644);
  CHECK(gt_out_check("/dev/null", GT_OUT_NEW, err, sizeof err) == 0);
}

static void test_pick(void) {
  char prefix[256], first[256], chosen[256], err[256];
  snprintf(prefix, sizeof prefix, "%s/run-", dir);
  path_of(first, "run-1.gtrace");
  CHECK(symlink("/nonexistent/target", first) == 0); /* a dangling, planted link */
  int fd = gt_out_pick(prefix, 1, ".gtrace", chosen, sizeof chosen, err, sizeof err);
  CHECK(fd >= 0);
  close(fd);
  char expect[256];
  path_of(expect, "run-2.gtrace");
  CHECK(strcmp(chosen, expect) == 0);
  CHECK(access("/nonexistent/target", F_OK) != 0);
}

/* A name taken says how the front end overwrites it; a directory is said to
 * be one, in every mode, with no hint (nothing overwrites it). */
static void test_hints(void) {
  char path[256], sub[256];
  path_of(path, "hinted.gtrace");
  write_file(path, "x", 0600);
  CHECK(refused(path, GT_OUT_NEW,
                "it exists (not overwritten; --force overwrites a file of yours)"));
  gt_out_force_hint("GPUTRACE_FORCE=1");
  CHECK(refused(
      path, GT_OUT_NEW,
      "it exists (not overwritten; GPUTRACE_FORCE=1 overwrites a file of yours)"));
  gt_out_force_hint("--force");
  path_of(sub, "a-dir");
  CHECK(mkdir(sub, 0700) == 0);
  for (int m = GT_OUT_NEW; m <= GT_OUT_APPEND; m++) {
    char err[512] = "";
    CHECK(gt_out_open(sub, (enum gt_out_mode)m, err, sizeof err) < 0 && errno == EISDIR);
    char want[300];
    snprintf(want, sizeof want, "cannot write %s: it is a directory", sub);
    CHECK(strcmp(err, want) == 0);
  }
}

int main(void) {
  if (!mkdtemp(dir))
    return 1;
  test_links_and_existing();
  test_special_files();
  test_append_and_create();
  test_pick();
  test_check();
  test_hints();
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK(system(cmd) == 0);
  return check_finish("test_outfile");
}
