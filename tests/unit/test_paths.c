/* test_paths.c — the socket directory: created 0700, a directory opened to
 * others is tightened, one owned by another user (as root: chown) is never
 * used: a private /tmp/gputrace-<uid>-XXXXXX is made instead, with a note
 * naming both. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "gputrace/paths.h"

int main(void) {
  char base[] = "/tmp/gt_paths_XXXXXX", dir[256], path[256], err[256];
  CHECK(mkdtemp(base) != NULL);
  setenv("XDG_RUNTIME_DIR", base, 1);
  CHECK(gt_socket_dir(dir, sizeof dir, err, sizeof err) == 0);
  char expect[300];
  snprintf(expect, sizeof expect, "%s/gputrace", base);
  CHECK(strcmp(dir, expect) == 0);
  struct stat st;
  CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);

  chmod(dir, 0755); /* opened up by someone: tightened again */
  CHECK(gt_socket_dir(dir, sizeof dir, err, sizeof err) == 0);
  CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);

  CHECK(gt_socket_path("record", 42, path, sizeof path, err, sizeof err) == 0);
  snprintf(expect, sizeof expect, "%s/gputrace/record-42.sock", base);
  CHECK(strcmp(path, expect) == 0);
  char a[256], b[256];
  CHECK(gt_socket_for_output("/x/run.gtrace", a, sizeof a, err, sizeof err) == 0);
  CHECK(gt_socket_for_output("/y/run.gtrace", b, sizeof b, err, sizeof err) == 0);
  CHECK(strcmp(a, b) != 0); /* one collector per output file */

  if (geteuid() == 0) { /* a directory owned by another user is squatted */
    char squatted[256];
    snprintf(squatted, sizeof squatted, "%s", dir);
    CHECK(chown(squatted, 65534, 65534) == 0);
    CHECK(gt_socket_dir(dir, sizeof dir, err, sizeof err) == 1);
    CHECK(strstr(err, "not a directory owned by uid 0") != NULL);
    CHECK(strncmp(dir, "/tmp/gputrace-0-", 16) == 0 && strlen(dir) == 22);
    CHECK(strstr(err, dir) != NULL);
    CHECK(gt_socket_dir_is_private(dir) == 1);
    CHECK(gt_socket_dir_is_private(squatted) == 0);
    CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700 &&
          st.st_uid == 0);
    CHECK(rmdir(dir) == 0);
  }
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", base);
  CHECK(system(cmd) == 0);
  return check_finish("test_paths");
}
