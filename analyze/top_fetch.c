/* top_fetch.c — one sample of a collector's live state (top.h): two
 * HTTP/1.0 GETs over a TCP socket, and the parsers of their bodies.
 *
 * Only the series `top` shows are read from /metrics (the names of
 * docs/monitoring/README.md); every other line is skipped, as are keys
 * /top.jsonl may add later. Each request has a 5 s deadline. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "gputrace/schema.h"
#include "top.h"
#include "util.h"

#define TOP_DEADLINE_MS 5000

void top_sample_free(struct top_sample *s) {
  for (size_t i = 0; i < s->nkernels; i++)
    free(s->kernels[i].name);
  for (int i = 0; i < s->nsites; i++)
    for (int k = 0; k < s->sites[i].nframes; k++) {
      free((char *)s->sites[i].frames[k].function);
      free((char *)s->sites[i].frames[k].file);
      free((char *)s->sites[i].frames[k].module);
    }
  free(s->procs);
  free(s->kernels);
  memset(s, 0, sizeof *s);
}

static char *text_dup(const char *t) {
  size_t n = strlen(t) + 1;
  return memcpy(gt_xcalloc(n, 1), t, n);
}

static struct top_proc *proc_of(struct top_sample *s, uint32_t pid) {
  for (size_t i = 0; i < s->nprocs; i++)
    if (s->procs[i].pid == pid)
      return &s->procs[i];
  s->procs = gt_grow(s->procs, &s->cprocs, s->nprocs + 1, sizeof *s->procs);
  s->procs[s->nprocs] = (struct top_proc){.pid = pid};
  return &s->procs[s->nprocs++];
}

/* ---- /metrics ---- */

/* The value of label `key` in "{a="x",b="y"}" (unescaped into buf), or NULL. */
static const char *label(const char *labels, const char *key, char *buf, size_t len) {
  size_t klen = strlen(key);
  for (const char *p = labels; p && *p && *p != '}';) {
    p += *p == '{' || *p == ',';
    int match = !strncmp(p, key, klen) && p[klen] == '=';
    p = strchr(p, '"');
    if (!p)
      return NULL;
    size_t n = 0;
    for (p++; *p && *p != '"'; p++) {
      char c = *p;
      if (c == '\\' && p[1])
        c = *++p == 'n' ? '\n' : *p;
      if (n + 1 < len)
        buf[n++] = c;
    }
    buf[n] = '\0';
    if (match)
      return buf;
    p += *p == '"';
  }
  return NULL;
}

static void metric_line(const char *line, struct top_sample *s) {
  size_t nlen = strcspn(line, "{ ");
  const char *labels = line[nlen] == '{' ? line + nlen : NULL;
  const char *val = labels ? strstr(labels, "} ") : line + nlen;
  if (!val)
    return;
  double v = strtod(val + (labels ? 2 : 1), NULL);
  char name[64], buf[512];
  if (nlen >= sizeof name)
    return;
  memcpy(name, line, nlen);
  name[nlen] = '\0';
  if (!strcmp(name, "gputrace_kernel_launches_total"))
    s->launches = (uint64_t)v;
  else if (!strcmp(name, "gputrace_events_dropped_total"))
    s->dropped = (uint64_t)v;
  else if (!strcmp(name, "gputrace_memcpy_bytes_total") &&
           label(labels, "dir", buf, sizeof buf)) {
    for (unsigned d = 0; d < TOP_DIRS; d++)
      if (!strcmp(buf, gt_dir_name(d)))
        s->copy_bytes[d] = (uint64_t)v;
  } else if (!strcmp(name, "gputrace_process_gpu_seconds_total") &&
             label(labels, "pid", buf, sizeof buf)) {
    proc_of(s, (uint32_t)strtoul(buf, NULL, 10))->gpu_s = v;
  } else if (!strcmp(name, "gputrace_device_memory_bytes") &&
             label(labels, "pid", buf, sizeof buf)) {
    struct top_proc *p = proc_of(s, (uint32_t)strtoul(buf, NULL, 10));
    if (!p->has_view)
      p->live = (uint64_t)v;
  } else if (!strcmp(name, "gputrace_kernel_gpu_seconds_total") &&
             label(labels, "kernel", buf, sizeof buf)) {
    s->kernels = gt_grow(s->kernels, &s->ckernels, s->nkernels + 1, sizeof *s->kernels);
    s->kernels[s->nkernels++] = (struct top_kernel){text_dup(buf), v};
  } else if (!strcmp(name, "gputrace_gpu_utilization_percent")) {
    double sum = s->ngpus ? s->gpu_util * s->ngpus : 0; /* a mean over the devices */
    s->gpu_util = (sum + v) / ++s->ngpus;
  }
}

void top_parse_metrics(const char *text, struct top_sample *s) {
  s->gpu_util = s->ngpus ? s->gpu_util : -1;
  for (const char *line = text; line && *line;) {
    const char *end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line) : strlen(line);
    if (n && line[0] != '#') {
      char *copy = gt_xcalloc(n + 1, 1);
      memcpy(copy, line, n);
      metric_line(copy, s);
      free(copy);
    }
    line = end ? end + 1 : NULL;
  }
}

/* ---- /top.jsonl: flat objects, one a line ---- */

#define JL_KEYS 12

struct jline {
  int n;
  char key[JL_KEYS][24];
  char *val[JL_KEYS]; /* strings unescaped, numbers as written */
};

/* A JSON string at *p (after its '"'): unescaped into out; *p after it. */
static void jstring(const char **p, char *out, size_t len) {
  size_t n = 0;
  const char *q = *p;
  for (; *q && *q != '"'; q++) {
    char c = *q;
    if (c == '\\' && q[1]) {
      c = *++q;
      if (c == 'n')
        c = '\n';
      else if (c == 'u' && strlen(q) >= 5) {
        unsigned long u = strtoul((char[5]){q[1], q[2], q[3], q[4], 0}, NULL, 16);
        c = u < 0x80 ? (char)u : '?';
        q += 4;
      }
    }
    if (n + 1 < len)
      out[n++] = c;
  }
  out[n] = '\0';
  *p = *q ? q + 1 : q;
}

static int jparse(const char *line, struct jline *j, char *store, size_t storelen) {
  j->n = 0;
  const char *p = strchr(line, '{');
  while (p && *p && *p != '}' && j->n < JL_KEYS) {
    p = strchr(p, '"');
    if (!p)
      break;
    p++;
    jstring(&p, j->key[j->n], sizeof j->key[j->n]);
    p += strspn(p, " :");
    j->val[j->n] = store;
    if (*p == '"') {
      p++;
      jstring(&p, store, storelen);
    } else {
      size_t n = strcspn(p, ",}");
      snprintf(store, storelen, "%.*s", (int)n, p);
      p += n;
    }
    size_t used = strlen(store) + 1;
    store += used, storelen -= used < storelen ? used : storelen;
    j->n++;
    p += strspn(p, " ,");
  }
  return j->n;
}

static const char *jget(const struct jline *j, const char *key) {
  for (int i = 0; i < j->n; i++)
    if (!strcmp(j->key[i], key))
      return j->val[i];
  return NULL;
}

static uint64_t jnum(const struct jline *j, const char *key) {
  const char *v = jget(j, key);
  return v ? strtoull(v, NULL, 10) : 0;
}

static void jline_apply(const struct jline *j, struct top_sample *s) {
  if (jget(j, "process")) {
    struct top_proc *p = proc_of(s, (uint32_t)jnum(j, "process"));
    p->live = jnum(j, "live_bytes");
    p->peak = jnum(j, "peak_bytes");
    p->launches = jnum(j, "launches");
    p->has_view = 1;
  } else if (jget(j, "site") && s->nsites < TOP_SITES) {
    struct top_site *t = &s->sites[s->nsites++];
    t->pid = (uint32_t)jnum(j, "pid");
    t->live = jnum(j, "live_bytes");
    t->blocks = jnum(j, "blocks");
    t->nframes = 0;
  } else if (jget(j, "frame") && s->nsites && jnum(j, "frame") == (uint64_t)s->nsites &&
             s->sites[s->nsites - 1].nframes < TOP_FRAMES) {
    struct top_site *t = &s->sites[s->nsites - 1];
    const char *fn = jget(j, "function"), *file = jget(j, "file"),
               *mod = jget(j, "module");
    t->frames[t->nframes++] = (struct gt_frame){
        .function = text_dup(fn ? fn : "??"),
        .file = text_dup(file ? file : ""),
        .module = text_dup(mod ? mod : ""),
        .line = (uint32_t)jnum(j, "line"),
        .python = (int)jnum(j, "python"),
    };
  }
}

void top_parse_jsonl(const char *text, struct top_sample *s) {
  for (const char *line = text; line && *line;) {
    const char *end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line) : strlen(line);
    char *copy = gt_xcalloc(n + 1, 1), *store = gt_xcalloc(n + 1, 1);
    memcpy(copy, line, n);
    struct jline j;
    if (jparse(copy, &j, store, n + 1))
      jline_apply(&j, s);
    free(copy);
    free(store);
    line = end ? end + 1 : NULL;
  }
}

/* ---- HTTP/1.0 ---- */

static int64_t ms_left(const struct timespec *deadline) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (int64_t)(deadline->tv_sec - now.tv_sec) * 1000 +
         (deadline->tv_nsec - now.tv_nsec) / 1000000;
}

/* connect(), given up after ms (ETIMEDOUT); the socket blocks again after. */
static int connect_within(int fd, const struct addrinfo *ai, int ms) {
  int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int rc = connect(fd, ai->ai_addr, ai->ai_addrlen), e = rc ? errno : 0;
  if (rc != 0 && e == EINPROGRESS) {
    struct pollfd pfd = {fd, POLLOUT, 0};
    socklen_t len = sizeof e;
    int p;
    while ((p = poll(&pfd, 1, ms)) < 0 && errno == EINTR)
      ;
    if (p <= 0)
      e = ETIMEDOUT;
    else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0)
      e = errno;
  }
  fcntl(fd, F_SETFL, flags);
  errno = e;
  return e ? -1 : 0;
}

/* A connected socket to addr_port, or -1 (TOP_GONE's errno ECONNREFUSED). */
static int dial(const char *addr_port, char *err, size_t errlen, int *status) {
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
  int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && connect_within(fd, ai, TOP_DEADLINE_MS) != 0) {
    int e = errno;
    close(fd);
    fd = -1;
    errno = e;
  }
  if (fd < 0) {
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

/* The body of GET path (malloc'd), or NULL with *status and err set; a 404
 * gives "" (a collector without that endpoint). */
static char *get(const char *addr_port, const char *path, int *status, char *err,
                 size_t errlen) {
  int fd = dial(addr_port, err, errlen, status);
  if (fd < 0)
    return NULL;
  char req[512];
  int n =
      snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", path, addr_port);
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += TOP_DEADLINE_MS / 1000;
  size_t len = 0, cap = 65536;
  int closed = 0; /* by the server */
  char *buf = gt_xcalloc(cap, 1);
  int ok = send_all(fd, req, (size_t)n) == 0;
  while (ok) { /* a signal (top's SIGINT, SIGWINCH) only interrupts a wait */
    struct pollfd pfd = {fd, POLLIN, 0};
    int64_t left = ms_left(&deadline);
    int p = left > 0 ? poll(&pfd, 1, (int)left) : 0;
    if (p < 0 && errno == EINTR)
      continue;
    if (p <= 0) {
      ok = 0;
      break;
    }
    if (len + 1 == cap)
      buf = gt_grow(buf, &cap, cap * 2, 1);
    ssize_t r = recv(fd, buf + len, cap - len - 1, 0);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0) {
      ok = r == 0;
      closed = r == 0 || errno == ECONNRESET;
      break;
    }
    len += (size_t)r;
  }
  close(fd);
  buf[len] = '\0';
  char *body = strstr(buf, "\r\n\r\n");
  int code = 0;
  if (ok && body && sscanf(buf, "HTTP/%*d.%*d %d", &code) == 1 &&
      (code == 200 || code == 404)) {
    memmove(buf, code == 200 ? body + 4 : "", code == 200 ? strlen(body + 4) + 1 : 1);
    return buf;
  }
  free(buf);
  if (closed && len == 0) { /* no answer at all: the collector is stopping */
    *status = TOP_GONE;
    snprintf(err, errlen, "%s: closed", addr_port);
    return NULL;
  }
  *status = TOP_BAD;
  if (!ok)
    snprintf(err, errlen, "%s%s: no complete answer (within 5 s)", addr_port, path);
  else if (code)
    snprintf(err, errlen, "%s%s: answered HTTP %d, not a gputrace collector", addr_port,
             path, code);
  else
    snprintf(err, errlen, "%s%s: not an HTTP answer", addr_port, path);
  return NULL;
}

int top_fetch(const char *addr_port, struct top_sample *s, char *err, size_t errlen) {
  int status = TOP_OK;
  char *metrics = get(addr_port, "/metrics", &status, err, errlen);
  if (!metrics)
    return status;
  char *view = get(addr_port, "/top.jsonl", &status, err, errlen);
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  memset(s, 0, sizeof *s);
  s->t = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
  if (view)
    top_parse_jsonl(view, s); /* first: its live bytes are the ones shown */
  top_parse_metrics(metrics, s);
  free(metrics);
  free(view);
  return view ? TOP_OK : status;
}
