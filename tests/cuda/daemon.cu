// daemon.cu — a program that behaves like a daemon: after its
// first CUDA call it closes every descriptor it did not open (0-2 kept),
// opens its own files (an input it reads at the end, 16 it writes: one of
// them takes the number the shim's socket had), pauses, then makes 1000
// more allocations (and frees)
// from 4 new threads, forks a child that writes to every file and makes one
// allocation, and checks its files byte for byte.
//   daemon DIR   (DIR/input: 4096 bytes, byte i = i % 251, made by the test)
// Files DIR/f0..f15 must end up "parent N\nchild N\n". Prints "input ok",
// "files ok" and "daemon: 1001 allocations"; exits 1 on any I/O problem.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define NFILES 16
static int fds[NFILES];
static int failed;

static void *allocate(void *) {
  for (int i = 0; i < 250; i++) {
    void *p = nullptr;
    if (cudaMalloc(&p, 1024) != cudaSuccess || cudaFree(p) != cudaSuccess)
      __atomic_add_fetch(&failed, 1, __ATOMIC_RELAXED);
  }
  return nullptr;
}

static int write_line(int fd, const char *who, int i) {
  char line[64];
  int n = snprintf(line, sizeof line, "%s %d\n", who, i);
  if (write(fd, line, n) != n) {
    fprintf(stderr, "%s: write to file %d (fd %d): %s\n", who, i, fd, strerror(errno));
    return 1;
  }
  return 0;
}

static int check_input(int fd) {
  unsigned char buf[8192];
  ssize_t got = 0, n;
  while (fd >= 0 && (n = read(fd, buf + got, sizeof buf - got)) > 0)
    got += n;
  if (fd >= 0)
    close(fd);
  if (got != 4096) {
    printf("input: %zd bytes, expected 4096\n", got);
    return 1;
  }
  for (int i = 0; i < 4096; i++)
    if (buf[i] != i % 251) {
      printf("input: byte %d differs\n", i);
      return 1;
    }
  printf("input ok\n");
  return 0;
}

static int check_files(const char *dir) {
  int bad = 0;
  for (int i = 0; i < NFILES; i++) {
    char path[512], want[64], got[128] = {0};
    snprintf(path, sizeof path, "%s/f%d", dir, i);
    snprintf(want, sizeof want, "parent %d\nchild %d\n", i, i);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(got, 1, sizeof got - 1, f) : 0;
    if (f)
      fclose(f);
    if (n != strlen(want) || memcmp(got, want, n) != 0) {
      printf("file f%d: %zu bytes %.40s\n", i, n, got);
      bad = 1;
    }
  }
  if (!bad)
    printf("files ok\n");
  return bad;
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  void *first = nullptr;
  if (cudaMalloc(&first, 256) != cudaSuccess)
    return 1; // the shim connects here
  if (syscall(SYS_close_range, 3u, ~0u, 0) != 0)
    for (int fd = 3; fd < 65536; fd++)
      close(fd);
  char input[512];
  snprintf(input, sizeof input, "%s/input", argv[1]);
  int in = open(input, O_RDONLY); // read only after all the CUDA calls
  for (int i = 0; i < NFILES; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/f%d", argv[1], i);
    fds[i] = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    if (fds[i] < 0)
      return 1;
  }
  usleep(300000); // long enough for a collector to notice the closed socket
  pthread_t th[4];
  for (int i = 0; i < 4; i++)
    pthread_create(&th[i], nullptr, allocate, nullptr);
  for (int i = 0; i < 4; i++)
    pthread_join(th[i], nullptr);
  int bad = 0;
  for (int i = 0; i < NFILES; i++)
    bad |= write_line(fds[i], "parent", i);
  pid_t child = fork();
  if (child == 0) {
    int cbad = 0;
    for (int i = 0; i < NFILES; i++)
      cbad |= write_line(fds[i], "child", i);
    void *p = nullptr;
    cbad |= cudaMalloc(&p, 64) != cudaSuccess;
    _exit(cbad);
  }
  int status = 0;
  waitpid(child, &status, 0);
  bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  for (int i = 0; i < NFILES; i++)
    close(fds[i]);
  bad |= check_input(in);
  bad |= check_files(argv[1]);
  printf("daemon: %d allocations\n", 1001 - failed);
  return bad || failed ? 1 : 0;
}
