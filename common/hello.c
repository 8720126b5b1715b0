/* hello.c — the traced process's side of the handshake (protocol.h), shared
 * by the shim and the tests that speak the protocol. No allocation: the
 * shim calls it from inside the traced process. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "gputrace/protocol.h"

int gt_hello_exchange(int sock, const struct gt_hello *hello, int memfd, int timeout_ms) {
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
  int ready = poll(&p, 1, timeout_ms);
  if (ready == 0)
    errno = ETIMEDOUT;
  if (ready != 1)
    return 0;
  char ack = 0;
  ssize_t got = recv(sock, &ack, 1, 0);
  if (got == 0) /* closed unanswered: the collector is exiting */
    errno = ECONNRESET;
  return got == 1 ? (unsigned char)ack : 0;
}
