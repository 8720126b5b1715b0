/* hello.c — the traced process's side of the handshake (protocol.h), shared
 * by the shim and the tests that speak the protocol, and the contract's
 * text (the collector's too). No allocation: the shim calls it from inside
 * the traced process. */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "gputrace/protocol.h"

static int64_t monotonic_ms(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

void gt_contract_format(const struct gt_contract *c, char *out, size_t len) {
  if (c->protocol < 2)
    snprintf(out, len, "%u", c->protocol);
  else
    snprintf(out, len, "%u/%u/%u/%u", c->protocol, c->ring, c->kinds, c->apis);
}

int gt_hello_exchange(int sock, const struct gt_hello *hello, int memfd, int timeout_ms,
                      struct gt_contract *theirs) {
  memset(theirs, 0, sizeof *theirs);
  char ctrl[CMSG_SPACE(sizeof(int))];
  memset(ctrl, 0, sizeof ctrl);
  struct iovec iov = {.iov_base = (void *)hello, .iov_len = sizeof *hello};
  struct msghdr msg = {.msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = ctrl,
                       .msg_controllen = sizeof ctrl};
  struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(cm), &memfd, sizeof(int));
  if (sendmsg(sock, &msg, MSG_NOSIGNAL) != (ssize_t)sizeof *hello)
    return -1;
  struct pollfd p = {.fd = sock, .events = POLLIN};
  int64_t deadline_ms = monotonic_ms() + timeout_ms;
  int ready, left = timeout_ms;
  /* The program's signals (a profiling timer, an alarm) must not cut the
   * wait short: the time left, again. */
  while ((ready = poll(&p, 1, left)) < 0 && errno == EINTR) {
    int64_t rest = deadline_ms - monotonic_ms();
    left = rest > 0 ? (int)rest : 0;
  }
  if (ready == 0)
    errno = ETIMEDOUT;
  if (ready != 1)
    return 0;
  struct gt_answer answer;
  memset(&answer, 0, sizeof answer);
  ssize_t got = recv(sock, &answer, sizeof answer, 0);
  if (got == 0) /* closed unanswered: the collector is exiting */
    errno = ECONNRESET;
  if (got == (ssize_t)sizeof answer)
    *theirs = answer.contract;
  else if (got == 1) /* protocol 1 answered one byte */
    theirs->protocol = 1;
  return got >= 1 ? answer.ack : 0;
}
