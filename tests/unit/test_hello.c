/* test_hello.c — the traced process's side of the handshake (common/hello.c,
 * include/gputrace/protocol.h) over a socketpair: the hello's bytes as the
 * collector receives them (1080, the protocol where version 1 had its
 * version, the memfd attached), an answer of this protocol (its contract
 * handed back), a protocol 1 collector's one-byte answer (contract 1), no
 * answer, and the contract's text. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "gputrace/protocol.h"

/* The hello as the collector's end receives it, and its descriptor count. */
static ssize_t take_hello(int fd, struct gt_hello *got, int *nfds) {
  char ctrl[CMSG_SPACE(4 * sizeof(int))];
  struct iovec iov = {.iov_base = got, .iov_len = sizeof *got};
  struct msghdr msg = {.msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = ctrl,
                       .msg_controllen = sizeof ctrl};
  ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT);
  *nfds = 0;
  for (struct cmsghdr *cm = n >= 0 ? CMSG_FIRSTHDR(&msg) : NULL; cm;
       cm = CMSG_NXTHDR(&msg, cm))
    if (cm->cmsg_type == SCM_RIGHTS)
      for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
        int fdi;
        memcpy(&fdi, CMSG_DATA(cm) + i * sizeof(int), sizeof fdi);
        close(fdi);
        (*nfds)++;
      }
  return n;
}

/* One exchange: the answer `answer` (`len` bytes; 0: none) queued first. */
static int exchange(const void *answer, size_t len, struct gt_contract *theirs,
                    struct gt_hello *got, ssize_t *got_bytes, int *nfds) {
  int sv[2];
  CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == 0);
  if (len)
    CHECK(send(sv[1], answer, len, 0) == (ssize_t)len);
  struct gt_hello h;
  memset(&h, 0, sizeof h);
  h.magic = GT_HELLO_MAGIC;
  h.contract = gt_contract_ours();
  h.pid = 4242;
  int ack = gt_hello_exchange(sv[0], &h, sv[0], 50, theirs);
  *got_bytes = take_hello(sv[1], got, nfds);
  close(sv[0]);
  close(sv[1]);
  return ack;
}

int main(void) {
  struct gt_contract ours = gt_contract_ours(), theirs;
  CHECK_EQ_U64(ours.protocol, 2);
  CHECK_EQ_U64(ours.ring, GT_RING_VERSION);
  CHECK_EQ_U64(ours.kinds, GT_KIND_COUNT);
  CHECK_EQ_U64(ours.apis, GT_API_COUNT);
  char text[48], want[48];
  gt_contract_format(&ours, text, sizeof text);
  snprintf(want, sizeof want, "2/%u/%u/%u", GT_RING_VERSION, (unsigned)GT_KIND_COUNT,
           (unsigned)GT_API_COUNT);
  CHECK_MSG(strcmp(text, want) == 0, "%s", text);
  struct gt_contract v1 = {1, 0, 0, 0};
  gt_contract_format(&v1, text, sizeof text);
  CHECK_MSG(strcmp(text, "1") == 0, "%s", text);

  /* This protocol's answer: the code and the collector's contract. */
  struct gt_answer answer = {.ack = GT_ACK_CONTRACT, .contract = ours};
  answer.contract.kinds = 63;
  struct gt_hello got;
  ssize_t n;
  int nfds;
  CHECK_EQ_U64(exchange(&answer, sizeof answer, &theirs, &got, &n, &nfds), 'C');
  CHECK_EQ_U64(theirs.protocol, 2);
  CHECK_EQ_U64(theirs.kinds, 63);
  CHECK_EQ_U64(theirs.apis, GT_API_COUNT);
  /* The hello on the wire: its size tells it from version 1's, the
   * protocol where version 1 kept its version, the memfd attached. */
  CHECK_EQ_U64(n, 1080);
  CHECK_EQ_U64(nfds, 1);
  uint32_t at8;
  memcpy(&at8, (const char *)&got + 8, sizeof at8);
  CHECK_EQ_U64(at8, GT_PROTOCOL_VERSION);
  CHECK(gt_contract_equal(&got.contract, &ours));
  CHECK_EQ_U64(got.pid, 4242);

  /* A protocol 1 collector: one byte, no contract. */
  char r = GT_ACK_REFUSED;
  CHECK_EQ_U64(exchange(&r, 1, &theirs, &got, &n, &nfds), 'R');
  CHECK_EQ_U64(theirs.protocol, 1);
  CHECK_EQ_U64(theirs.kinds, 0);

  /* No answer within the timeout. */
  errno = 0;
  CHECK_EQ_U64(exchange(NULL, 0, &theirs, &got, &n, &nfds), 0);
  CHECK_EQ_U64(errno, ETIMEDOUT);
  CHECK_EQ_U64(theirs.protocol, 0);
  return check_finish("test_hello");
}
