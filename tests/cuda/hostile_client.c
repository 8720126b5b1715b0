/* hostile_client.c — a traced process that attacks its collector,
 * speaking the protocol of include/gputrace/protocol.h to $GPUTRACE_SOCKET.
 *
 *   hostile_client silent N SECONDS   N connections that never say hello
 *   hostile_client huge BYTES         a sparse ring of BYTES, only its header written
 *   hostile_client fifo PATH SECONDS  a MODULE record naming PATH (a FIFO), a STACK
 *   hostile_client mutate SECONDS     STACK records whose slot counts another
 *                                     thread keeps flipping while they are read
 *   hostile_client scribble SECONDS   10 honest synchronizations, then records
 *                                     with impossible times, garbage drop counters
 *                                     and a sub-ring head far past its ring
 *   hostile_client contract v1|kinds SECONDS
 *                                     a real ring holding a synchronization, with a
 *                                     protocol 1 hello (1064 bytes, version 1), or
 *                                     this protocol's hello claiming one kind more
 *
 * Prints one line: "ack K", "ack R" (the collector's answer) or "no ack";
 * contract kinds adds the collector's contract ("ack C contract 2/3/23/180"),
 * contract v1 reads the answer's first byte alone, as a protocol 1 shim does.
 * Exits 0 whatever the collector does: the test judges the collector. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "gputrace/protocol.h"
#include "gputrace/ring.h"

static int connect_collector(void) {
  const char *path = getenv(GT_ENV_SOCKET);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  if (!path || strlen(path) >= sizeof addr.sun_path) {
    fprintf(stderr, "hostile_client: no %s\n", GT_ENV_SOCKET);
    exit(2);
  }
  strcpy(addr.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
    perror("hostile_client: connect");
    exit(2);
  }
  return fd;
}

/* Send a hello for `memfd` announcing `bytes`; print the answer. */
static int hello(int memfd, uint64_t bytes) {
  int fd = connect_collector();
  struct gt_hello h;
  memset(&h, 0, sizeof h);
  h.magic = GT_HELLO_MAGIC;
  h.contract = gt_contract_ours();
  h.pid = (uint32_t)getpid();
  h.ppid = (uint32_t)getppid();
  h.ring_bytes = bytes;
  h.cmdline_len = (uint32_t)snprintf(h.cmdline, sizeof h.cmdline, "hostile_client");
  struct gt_contract theirs;
  int ack = gt_hello_exchange(fd, &h, memfd, 30000, &theirs);
  if (ack > 0)
    printf("ack %c\n", ack);
  else
    printf("no ack\n");
  fflush(stdout);
  return fd;
}

static int make_memfd(uint64_t bytes) {
  int fd =
      (int)syscall(SYS_memfd_create, "gputrace-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) {
    perror("hostile_client: memfd");
    exit(2);
  }
  return fd;
}

/* A real ring of 64 KiB (a shared ring of 64 slots), sealed as the shim
 * seals it; records go to its shared ring. Its memfd, its size in *len. */
static struct gt_ring g_ring;
static int ring_make(size_t *len) {
  *len = gt_ring_bytes_for(64 * 1024);
  int memfd = make_memfd(*len);
  void *mem = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
  if (mem == MAP_FAILED)
    exit(2);
  gt_ring_init(mem, 64 * 1024, (uint32_t)getpid(), GT_CLOCK_MONOTONIC);
  fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  gt_ring_attach(&g_ring, mem, *len);
  return memfd;
}

static int ring_connect(void) {
  size_t len;
  int memfd = ring_make(&len);
  int fd = hello(memfd, len);
  close(memfd);
  return fd;
}

static void put_text(unsigned kind, unsigned api, const void *text, size_t len) {
  struct gt_record buf[GT_MAX_SLOTS];
  memset(buf, 0, sizeof buf);
  buf[0].pid = buf[0].tid = (uint32_t)getpid();
  buf[0].kind = (uint8_t)kind;
  buf[0].api = (uint16_t)api;
  if (kind == GT_KIND_STACK) {
    buf[0].u.stack.id = 1;
    buf[0].u.stack.depth = (uint32_t)(len / 8);
  }
  gt_record_attach_text(&buf[0], text, len);
  gt_ring_write(&g_ring, &buf[0]);
}

static void pause_s(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}

static _Atomic int g_stop;

static void *flip_slot_counts(void *p) {
  (void)p;
  volatile unsigned char *slots = g_ring.slots;
  while (!atomic_load(&g_stop))
    for (unsigned s = 0; s <= g_ring.mask; s++) {
      /* a full frame's record starts 8 bytes into its first slot */
      volatile struct gt_record *r = (volatile void *)(slots + (size_t)s * GT_RSLOT + 8);
      if (r->kind == GT_KIND_STACK)
        r->nslots = r->nslots == 255 ? 3 : 255;
    }
  return NULL;
}

static void mutate(double seconds) {
  int fd = ring_connect();
  pthread_t th;
  pthread_create(&th, NULL, flip_slot_counts, NULL);
  uint64_t ips[16];
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (uint64_t i = 0;; i++) {
    for (int k = 0; k < 16; k++)
      ips[k] = 0x401000 + (i % 64) * 16 + (uint64_t)k; /* 1024 distinct addresses */
    put_text(GT_KIND_STACK, GT_API_gputrace_stack, ips, sizeof ips);
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 > seconds)
      break;
  }
  atomic_store(&g_stop, 1);
  pthread_join(th, NULL);
  close(fd);
}

static void put_sync(uint64_t ts, uint64_t dur) {
  struct gt_record r;
  memset(&r, 0, sizeof r);
  r.pid = r.tid = (uint32_t)getpid();
  r.kind = GT_KIND_SYNC;
  r.api = GT_API_cudaDeviceSynchronize;
  r.nslots = 1;
  r.ts_ns = ts;
  r.dur_ns = dur;
  gt_ring_write(&g_ring, &r);
}

/* A buggy program's stray writes into its own ring, beside honest records. */
static void scribble(double seconds) {
  int fd = ring_connect();
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  uint64_t now = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
  for (int i = 0; i < 10; i++)
    put_sync(now + (uint64_t)i * 1000, 500);
  put_sync(now + (17524196857ull * 1000000000u), 1000); /* far in the future */
  put_sync(1000, 1000);                                 /* long before it started */
  put_sync(now, UINT64_MAX - now / 2);                  /* an end past any time */
  pause_s(seconds / 2);                                 /* the collector takes those */
  atomic_store(&g_ring.hdr->dropped[GT_KIND_LAUNCH], 3008939473955805617ull);
  atomic_store(&g_ring.dir[0].head, 0xdeadbeefdeadbeefull);
  pause_s(seconds / 2);
  close(fd);
}

/* A protocol 1 hello, as shims before the contract sent it. */
struct hello_v1 {
  uint64_t magic;
  uint32_t version; /* 1 */
  uint32_t pid, ppid, cmdline_len;
  uint64_t ring_bytes, start_ns;
  char cmdline[GT_CMDLINE_MAX];
};
_Static_assert(sizeof(struct hello_v1) == GT_HELLO_V1_BYTES, "protocol 1's hello");

/* Send `len` bytes of hello with `memfd` attached; print the answer's code,
 * and with `full` the contract after it (else read one byte: protocol 1). */
static void raw_hello(int fd, const void *msg, size_t len, int memfd, int full) {
  char ctrl[CMSG_SPACE(sizeof(int))];
  memset(ctrl, 0, sizeof ctrl);
  struct iovec iov = {.iov_base = (void *)msg, .iov_len = len};
  struct msghdr m = {.msg_iov = &iov,
                     .msg_iovlen = 1,
                     .msg_control = ctrl,
                     .msg_controllen = sizeof ctrl};
  struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(cm), &memfd, sizeof(int));
  struct gt_answer a;
  memset(&a, 0, sizeof a);
  struct pollfd p = {.fd = fd, .events = POLLIN};
  ssize_t got = -1;
  if (sendmsg(fd, &m, MSG_NOSIGNAL) == (ssize_t)len && poll(&p, 1, 30000) == 1)
    got = recv(fd, &a, full ? sizeof a : 1, 0);
  char contract[48] = "";
  gt_contract_format(&a.contract, contract, sizeof contract);
  if (got == (ssize_t)sizeof a && full)
    printf("ack %c contract %s\n", a.ack, contract);
  else if (got == 1 && !full)
    printf("ack %c\n", a.ack);
  else
    printf("no ack (%zd bytes)\n", got);
  fflush(stdout);
}

/* A hello of another contract for a real ring holding one synchronization,
 * which the collector must never read. */
static void contract_skew(const char *which, double seconds) {
  size_t len;
  int memfd = ring_make(&len);
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  put_sync((uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec, 500);
  int fd = connect_collector();
  if (!strcmp(which, "v1")) {
    struct hello_v1 h;
    memset(&h, 0, sizeof h);
    h.magic = GT_HELLO_MAGIC;
    h.version = 1;
    h.pid = (uint32_t)getpid();
    h.ppid = (uint32_t)getppid();
    h.ring_bytes = len;
    h.cmdline_len = (uint32_t)snprintf(h.cmdline, sizeof h.cmdline, "hostile_client v1");
    raw_hello(fd, &h, sizeof h, memfd, 0);
  } else {
    struct gt_hello h;
    memset(&h, 0, sizeof h);
    h.magic = GT_HELLO_MAGIC;
    h.contract = gt_contract_ours();
    h.contract.kinds++;
    h.pid = (uint32_t)getpid();
    h.ppid = (uint32_t)getppid();
    h.ring_bytes = len;
    h.cmdline_len =
        (uint32_t)snprintf(h.cmdline, sizeof h.cmdline, "hostile_client kinds");
    raw_hello(fd, &h, sizeof h, memfd, 1);
  }
  close(memfd);
  pause_s(seconds);
  close(fd);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "silent") && argc == 4) {
    int n = atoi(argv[2]);
    for (int i = 0; i < n; i++)
      connect_collector(); /* and never a word */
    printf("connected %d\n", n);
    fflush(stdout);
    pause_s(atof(argv[3]));
  } else if (!strcmp(mode, "huge") && argc == 3) {
    uint64_t bytes = strtoull(argv[2], NULL, 0);
    int memfd = make_memfd(bytes);
    /* A valid header (and nothing else written): the ring looks real. */
    struct gt_ring_hdr hdr;
    struct gt_ring_layout l;
    memset(&hdr, 0, sizeof hdr);
    gt_ring_layout(bytes, &l);
    hdr.magic = GT_RING_MAGIC;
    hdr.version = GT_RING_VERSION;
    hdr.slot_size = GT_RSLOT;
    hdr.total_bytes = bytes;
    hdr.nsub = l.nsub;
    hdr.shared_cap = l.shared_cap;
    hdr.block_slots = l.block_slots;
    hdr.nblocks = l.nblocks;
    hdr.pid = (uint32_t)getpid();
    if (pwrite(memfd, &hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr)
      exit(2);
    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
    close(hello(memfd, bytes));
  } else if (!strcmp(mode, "fifo") && argc == 4) {
    int fd = ring_connect();
    put_text(GT_KIND_MODULE, GT_API_gputrace_module, argv[2], strlen(argv[2]));
    uint64_t ip = 0x1234;
    put_text(GT_KIND_STACK, GT_API_gputrace_stack, &ip, sizeof ip);
    pause_s(atof(argv[3]));
    close(fd);
  } else if (!strcmp(mode, "mutate") && argc == 3) {
    mutate(atof(argv[2]));
  } else if (!strcmp(mode, "scribble") && argc == 3) {
    scribble(atof(argv[2]));
  } else if (!strcmp(mode, "contract") && argc == 4 &&
             (!strcmp(argv[2], "v1") || !strcmp(argv[2], "kinds"))) {
    contract_skew(argv[2], atof(argv[3]));
  } else {
    fprintf(stderr, "usage: hostile_client silent N SECONDS | huge BYTES | fifo PATH "
                    "SECONDS | mutate SECONDS | scribble SECONDS | contract v1|kinds "
                    "SECONDS\n");
    return 2;
  }
  return 0;
}
