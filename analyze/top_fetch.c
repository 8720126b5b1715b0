/* top_fetch.c — one sample of a collector's live state (top.h): two
 * HTTP/1.0 GETs over a TCP socket, bounded by top.h's caps, their bodies
 * parsed by top_parse.c.
 *
 * Every wait (a connect, an answer) polls the socket and top_input's
 * keyboard, to one deadline for the whole sample: a key or a signal that
 * says stop ends the sample at once (TOP_STOP), however slow the server.
 * An answer is read into one buffer that never grows past its cap: the
 * headers' TOP_HEAD_MAX, then the body's TOP_BODY_MAX after them. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "top.h"
#include "util.h"

static int64_t ms_left(const struct timespec *deadline) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)(deadline->tv_sec - now.tv_sec) * 1000 +
         (deadline->tv_nsec - now.tv_nsec) / 1000000;
}

enum { W_STOP = -1, W_LATE = 0, W_READY = 1 };

/* Waits until fd has `events` (or an error), the deadline passes (W_LATE)
 * or `in` says stop (W_STOP), handing it the keys and signals meanwhile. */
static int wait_ready(int fd, short events, const struct timespec *deadline,
                      const struct top_input *in) {
  int keys = in && in->fd >= 0;
  for (;;) {
    if (in && in->on_input(in->ctx, 0))
      return W_STOP;
    int64_t left = ms_left(deadline);
    if (left <= 0)
      return W_LATE;
    struct pollfd pfd[2] = {{fd, events, 0}, {keys ? in->fd : -1, POLLIN, 0}};
    int p = poll(pfd, keys ? 2 : 1, left > INT_MAX ? INT_MAX : (int)left);
    if (p < 0 && errno != EINTR)
      return W_READY; /* the call that follows says what is wrong */
    if (p > 0 && pfd[1].revents && in->on_input(in->ctx, pfd[1].revents))
      return W_STOP;
    if (p > 0 && pfd[0].revents)
      return W_READY;
  }
}

enum { C_FAILED = -1, C_CONNECTED = 0, C_STOPPED = 1 };

/* connect() by the deadline; the socket blocks again after. C_FAILED sets
 * errno (ETIMEDOUT when late). */
static int connect_by(int fd, const struct addrinfo *ai, const struct timespec *deadline,
                      const struct top_input *in) {
  int flags = fcntl(fd, F_GETFL), w = W_READY;
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int rc = connect(fd, ai->ai_addr, ai->ai_addrlen), e = rc ? errno : 0;
  if (rc != 0 && e == EINPROGRESS) {
    socklen_t len = sizeof e;
    w = wait_ready(fd, POLLOUT, deadline, in);
    if (w == W_LATE)
      e = ETIMEDOUT;
    else if (w == W_READY && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0)
      e = errno;
  }
  fcntl(fd, F_SETFL, flags);
  errno = e;
  return w == W_STOP ? C_STOPPED : e ? C_FAILED : C_CONNECTED;
}

/* A connected socket to addr_port, or -1 with *status (TOP_GONE: refused,
 * TOP_STOP, TOP_BAD) and err set. */
static int dial(const char *addr_port, const struct timespec *deadline,
                const struct top_input *in, int *status, char *err, size_t errlen) {
  char host[256];
  const char *colon = strrchr(addr_port, ':');
  *status = TOP_BAD;
  if (!colon || colon == addr_port || (size_t)(colon - addr_port) >= sizeof host) {
    snprintf(err, errlen, "%s: expected ADDR:PORT", addr_port);
    return -1;
  }
  snprintf(host, sizeof host, "%.*s", (int)(colon - addr_port), addr_port);
  if (host[0] == '[' && host[strlen(host) - 1] == ']') { /* [::1]:9400 */
    memmove(host, host + 1, strlen(host));
    host[strlen(host) - 1] = '\0';
  }
  struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *ai;
  int rc = getaddrinfo(host, colon + 1, &hints, &ai);
  if (rc != 0) {
    snprintf(err, errlen, "%s: %s", addr_port, gai_strerror(rc));
    return -1;
  }
  int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), c = C_CONNECTED;
  if (fd >= 0 && (c = connect_by(fd, ai, deadline, in)) != C_CONNECTED) {
    int e = errno;
    close(fd);
    fd = -1;
    errno = e;
  }
  if (c == C_STOPPED)
    *status = TOP_STOP;
  else if (fd < 0) {
    *status = errno == ECONNREFUSED ? TOP_GONE : TOP_BAD;
    snprintf(err, errlen, "%s: %s", addr_port, strerror(errno));
  }
  freeaddrinfo(ai);
  return fd;
}

static int send_all(int fd, const char *s, size_t n) {
  while (n) {
    ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
    if (w <= 0)
      return -1;
    s += w, n -= (size_t)w;
  }
  return 0;
}

struct answer {
  char *buf; /* NUL-terminated at len */
  size_t len, cap;
  size_t body; /* where the body starts; 0 while the headers go on */
  int cut;     /* the body reached TOP_BODY_MAX: the rest was not read */
};

enum { A_DONE, A_CLOSED_EMPTY, A_LATE, A_STOP, A_HEAD_LONG, A_BROKEN };

/* Reads an answer until the server closes it or a cap is reached. */
static int read_answer(int fd, const struct timespec *deadline,
                       const struct top_input *in, struct answer *a) {
  for (;;) {
    size_t limit = a->body ? a->body + TOP_BODY_MAX : TOP_HEAD_MAX;
    if (a->len == limit) {
      a->cut = a->body != 0;
      return a->cut ? A_DONE : A_HEAD_LONG;
    }
    int w = wait_ready(fd, POLLIN, deadline, in);
    if (w != W_READY)
      return w == W_STOP ? A_STOP : A_LATE;
    size_t chunk = limit - a->len < 65536 ? limit - a->len : 65536;
    if (a->len + chunk + 1 > a->cap) { /* doubled, but never past limit + 1 */
      size_t cap = a->cap ? a->cap * 2 : 65536;
      cap = cap > limit + 1            ? limit + 1
            : cap < a->len + chunk + 1 ? a->len + chunk + 1
                                       : cap;
      a->buf = gt_xrealloc(a->buf, cap);
      a->cap = cap;
    }
    ssize_t r = recv(fd, a->buf + a->len, chunk, 0);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0) {
      int closed = r == 0 || errno == ECONNRESET;
      return closed && a->len == 0 ? A_CLOSED_EMPTY : r == 0 ? A_DONE : A_BROKEN;
    }
    size_t from = a->len > 3 ? a->len - 3 : 0;
    a->len += (size_t)r;
    a->buf[a->len] = '\0';
    char *end = a->body ? NULL : memmem(a->buf + from, a->len - from, "\r\n\r\n", 4);
    if (end)
      a->body = (size_t)(end - a->buf) + 4;
  }
}

/* The body of GET path in *a (a->buf + a->body, len - body bytes, cut
 * after its last whole line when a cap cut it), or a status other than
 * TOP_OK with err set; a 404 is an empty body (a collector without that
 * endpoint). */
static int get(const char *addr_port, const char *path, const struct timespec *deadline,
               const struct top_input *in, struct answer *a, char *err, size_t errlen) {
  int status;
  int fd = dial(addr_port, deadline, in, &status, err, errlen);
  if (fd < 0)
    return status;
  char req[512];
  int n =
      snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", path, addr_port);
  int r = send_all(fd, req, (size_t)n) == 0 ? read_answer(fd, deadline, in, a) : A_BROKEN;
  close(fd);
  int code = 0;
  if (r == A_DONE && a->body && sscanf(a->buf, "HTTP/%*d.%*d %d", &code) == 1 &&
      (code == 200 || code == 404)) {
    if (code == 404)
      a->len = a->body, a->cut = 0;
    else if (a->cut) { /* the partial line is not read: counted as the cut */
      char *nl = memrchr(a->buf + a->body, '\n', a->len - a->body);
      a->len = nl ? (size_t)(nl + 1 - a->buf) : a->body;
    }
    a->buf[a->len] = '\0';
    return TOP_OK;
  }
  if (r == A_STOP)
    return TOP_STOP;
  if (r == A_CLOSED_EMPTY) { /* no answer at all: the collector is stopping */
    snprintf(err, errlen, "%s: closed", addr_port);
    return TOP_GONE;
  }
  if (r == A_LATE || r == A_BROKEN)
    snprintf(err, errlen, "%s%s: no complete answer (within %d s)", addr_port, path,
             TOP_DEADLINE_MS / 1000);
  else if (r == A_HEAD_LONG)
    snprintf(err, errlen, "%s%s: headers over %u KiB, not a gputrace collector",
             addr_port, path, TOP_HEAD_MAX >> 10);
  else if (code)
    snprintf(err, errlen, "%s%s: answered HTTP %d, not a gputrace collector", addr_port,
             path, code);
  else
    snprintf(err, errlen, "%s%s: not an HTTP answer", addr_port, path);
  return TOP_BAD;
}

int top_fetch(const char *addr_port, struct top_sample *s, const struct top_input *in,
              char *err, size_t errlen) {
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += TOP_DEADLINE_MS / 1000;
  deadline.tv_nsec += (TOP_DEADLINE_MS % 1000) * 1000000L;
  struct answer metrics = {0}, view = {0};
  int status = get(addr_port, "/metrics", &deadline, in, &metrics, err, errlen);
  if (status == TOP_OK)
    status = get(addr_port, "/top.jsonl", &deadline, in, &view, err, errlen);
  memset(s, 0, sizeof *s);
  if (status == TOP_OK) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    s->t = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
    /* /top.jsonl first: its live bytes are the ones shown */
    top_parse_jsonl(view.buf + view.body, view.len - view.body, s);
    top_parse_metrics(metrics.buf + metrics.body, metrics.len - metrics.body, s);
    s->loss.cut = (metrics.cut ? TOP_CUT_METRICS : 0) | (view.cut ? TOP_CUT_VIEW : 0);
  }
  free(metrics.buf);
  free(view.buf);
  return status;
}
