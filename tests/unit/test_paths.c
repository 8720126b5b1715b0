/* test_paths.c — the socket directory: created 0700, a directory opened to
 * others is tightened, one owned by another user (as root: chown) is never
 * used: a private /tmp/gputrace-<uid>-XXXXXX is made instead, with a note
 * naming both. The stand-alone collector's socket, and whether one runs. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"
#include "gputrace/paths.h"

/* The stand-alone collector's socket: DIR/collector.sock, and it runs only
 * while its lock file is held (a socket alone is a dead one's); the socket
 * directory's name comes without creating it. */
static void check_pod_socket(const char *base) {
  char path[300], dir[300], lock[320];
  CHECK(gt_pod_socket("/run/gputrace", path, sizeof path) == 0);
  CHECK(strcmp(path, "/run/gputrace/" GT_POD_SOCKET_NAME) == 0);
  char longdir[120];
  memset(longdir, 'd', sizeof longdir - 1);
  longdir[sizeof longdir - 1] = '\0';
  CHECK(gt_pod_socket(longdir, path, sizeof path) == -1); /* past sun_path */
  snprintf(dir, sizeof dir, "%s/pod", base);
  CHECK(mkdir(dir, 0700) == 0);
  CHECK(gt_pod_socket(dir, path, sizeof path) == 0);
  CHECK(gt_collector_listens(path) == 0); /* nothing there */
  int sock = socket(AF_UNIX, SOCK_SEQPACKET, 0);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  CHECK(strlen(path) < sizeof addr.sun_path);
  memcpy(addr.sun_path, path, strlen(path) + 1);
  CHECK(sock >= 0 && bind(sock, (struct sockaddr *)&addr, sizeof addr) == 0);
  CHECK(gt_collector_listens(path) == 0); /* a socket, no lock file */
  snprintf(lock, sizeof lock, "%s.lock", path);
  int held = open(lock, O_RDWR | O_CREAT, 0600);
  CHECK(held >= 0 && gt_collector_listens(path) == 0); /* a lock nobody holds */
  CHECK(flock(held, LOCK_EX | LOCK_NB) == 0);
  CHECK(gt_collector_listens(path) == 1); /* its collector runs */
  CHECK(flock(held, LOCK_UN) == 0 && gt_collector_listens(path) == 0);
  close(held);
  close(sock);
  CHECK(unlink(path) == 0 && open(path, O_RDWR | O_CREAT, 0600) >= 0);
  held = open(lock, O_RDWR);
  CHECK(flock(held, LOCK_EX | LOCK_NB) == 0);
  CHECK(gt_collector_listens(path) == 0); /* a regular file is no socket */
  close(held);
  char fresh[200];
  snprintf(fresh, sizeof fresh, "%s/fresh", base);
  CHECK(mkdir(fresh, 0700) == 0);
  setenv("XDG_RUNTIME_DIR", fresh, 1);
  CHECK(gt_socket_dir_name(dir, sizeof dir) == 0);
  snprintf(path, sizeof path, "%s/gputrace", fresh);
  struct stat st;
  CHECK(strcmp(dir, path) == 0 && stat(dir, &st) != 0); /* named, not made */
}

/* gt_read_proc: this process's own comm, whole and cut to the buffer; a
 * pid that is no process. */
static void check_read_proc(void) {
  char buf[64], small[4];
  CHECK(gt_read_proc((unsigned long)getpid(), "comm", buf, sizeof buf) ==
        (long)strlen("test_paths\n"));
  CHECK(strcmp(buf, "test_paths\n") == 0);
  CHECK(gt_read_proc((unsigned long)getpid(), "comm", small, sizeof small) == 3);
  CHECK(strcmp(small, "tes") == 0);
  CHECK(gt_read_proc(999999999ul, "stat", buf, sizeof buf) == -1);
}

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
  check_pod_socket(base);
  check_read_proc();
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", base);
  CHECK(system(cmd) == 0);
  return check_finish("test_paths");
}
