/* prom.c — live metrics for Prometheus (see collector.h, docs/monitoring/).
 *
 * The drain loop counts every record the sink takes (gt_prom_observe: plain
 * increments, no lock) and publishes a copy of its counters every
 * GT_PROM_PUBLISH_NS (gt_prom_publish: one memcpy under the mutex). The
 * HTTP thread (libmicrohttpd's own) copies the published snapshot under the
 * same mutex and formats /metrics outside it, so a scrape never holds up
 * draining. Labels are bounded: APIs (the fixed table), copy directions,
 * up to GT_PROM_MAX_PIDS live processes and GT_PROM_MAX_GPUS devices.
 * CUDA graphs as every analysis counts them (model/graphs.h): a captured
 * or added node is a call, not a launch, and its memory is the graph's; a
 * graph launch counts the kernels and copies it runs. */
#include <arpa/inet.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "gputrace/map.h"
#include "graphs.h"

#ifdef GT_HAVE_MHD
#include <microhttpd.h>
#endif

#define GT_PROM_MAX_PIDS 64
#define GT_PROM_MAX_GPUS 16
#define GT_PROM_PUBLISH_NS 100000000ull /* 100 ms */

struct prom_counters {
  uint64_t launches;
  uint64_t api_calls[GT_API_COUNT];
  uint64_t api_ns[GT_API_COUNT];
  uint64_t memcpy_bytes[6]; /* enum gt_dir */
  uint64_t dropped;
  uint32_t pid[GT_PROM_MAX_PIDS]; /* 0 = free slot */
  uint64_t pid_bytes[GT_PROM_MAX_PIDS];
  int gpu_seen[GT_PROM_MAX_GPUS];
  double gpu_util[GT_PROM_MAX_GPUS], gpu_mem_used[GT_PROM_MAX_GPUS],
      gpu_temp[GT_PROM_MAX_GPUS], gpu_power[GT_PROM_MAX_GPUS],
      gpu_mem_total[GT_PROM_MAX_GPUS];
  uint8_t has_util[GT_PROM_MAX_GPUS], has_mem[GT_PROM_MAX_GPUS],
      has_temp[GT_PROM_MAX_GPUS], has_power[GT_PROM_MAX_GPUS],
      has_total[GT_PROM_MAX_GPUS];
};

struct gt_prom {
  struct prom_counters live; /* the drain loop's own */
  struct gt_map allocs;      /* (pid, ptr) -> bytes of live device allocations */
  struct gt_graphs *graphs;  /* what each graph launch runs */
  uint64_t last_publish;
  pthread_mutex_t mu;
  struct prom_counters snap; /* published, under mu */
#ifdef GT_HAVE_MHD
  struct MHD_Daemon *daemon;
#endif
};

static int pid_slot(struct prom_counters *c, uint32_t pid, int create) {
  int free_slot = -1;
  for (int i = 0; i < GT_PROM_MAX_PIDS; i++) {
    if (c->pid[i] == pid)
      return i;
    if (!c->pid[i] && free_slot < 0)
      free_slot = i;
  }
  if (!create || free_slot < 0)
    return -1;
  c->pid[free_slot] = pid;
  c->pid_bytes[free_slot] = 0;
  return free_slot;
}

static void observe_work(struct gt_prom *p, const struct gt_record *r);

void gt_prom_observe(void *ctx, const struct gt_record *r) {
  struct gt_prom *p = ctx;
  struct prom_counters *c = &p->live;
  if (gt_kind_is_call(r->kind) && r->api < GT_API_COUNT) {
    c->api_calls[r->api]++;
    c->api_ns[r->api] += r->dur_ns;
  }
  enum gt_graphs_verdict v = gt_graphs_feed(p->graphs, r);
  if (v == GT_GRAPHS_HIDE)
    return; /* a graph's node: ran nothing */
  if (v == GT_GRAPHS_PASS) {
    observe_work(p, r);
    return;
  }
  size_t n;
  const struct gt_record *runs = gt_graphs_expansion(p->graphs, &n);
  for (size_t i = 0; i < n; i++)
    observe_work(p, &runs[i]);
}

static void observe_work(struct gt_prom *p, const struct gt_record *r) {
  struct prom_counters *c = &p->live;
  switch (r->kind) {
  case GT_KIND_LAUNCH:
    c->launches++;
    break;
  case GT_KIND_MEMCPY:
    if (r->result == 0 && r->u.copy.dir < 6)
      c->memcpy_bytes[r->u.copy.dir] += r->u.copy.bytes;
    break;
  case GT_KIND_ALLOC:
    if (r->result == 0 && r->u.mem.memory == GT_MEM_DEVICE && r->u.mem.ptr) {
      int s = pid_slot(c, r->pid, 1);
      if (s >= 0 &&
          gt_map_put(&p->allocs, gt_pid_key(r->pid, r->u.mem.ptr), r->u.mem.bytes) == 0)
        c->pid_bytes[s] += r->u.mem.bytes;
    }
    break;
  case GT_KIND_FREE: {
    uint64_t key = gt_pid_key(r->pid, r->u.mem.ptr), bytes;
    if (r->result == 0 && gt_map_get(&p->allocs, key, &bytes)) {
      gt_map_del(&p->allocs, key);
      int s = pid_slot(c, r->pid, 0);
      if (s >= 0)
        c->pid_bytes[s] -= bytes < c->pid_bytes[s] ? bytes : c->pid_bytes[s];
    }
    break;
  }
  case GT_KIND_PROCESS:
    if (r->u.proc.phase == GT_PROC_END) { /* bounded labels: a gone process leaves */
      int s = pid_slot(c, r->pid, 0);
      if (s >= 0)
        c->pid[s] = 0;
    }
    break;
  case GT_KIND_DROP:
    c->dropped += r->u.count.count;
    break;
  case GT_KIND_METRIC: {
    unsigned g = r->u.metric.device;
    if (g >= GT_PROM_MAX_GPUS)
      break;
    double v = r->u.metric.value;
    c->gpu_seen[g] = 1;
    switch (r->u.metric.metric) {
    case GT_METRIC_GPU_UTIL:
      c->gpu_util[g] = v, c->has_util[g] = 1;
      break;
    case GT_METRIC_MEM_USED:
      c->gpu_mem_used[g] = v, c->has_mem[g] = 1;
      break;
    case GT_METRIC_MEM_TOTAL:
      c->gpu_mem_total[g] = v, c->has_total[g] = 1;
      break;
    case GT_METRIC_TEMP:
      c->gpu_temp[g] = v, c->has_temp[g] = 1;
      break;
    case GT_METRIC_POWER:
      c->gpu_power[g] = v, c->has_power[g] = 1;
      break;
    }
    break;
  }
  }
}

void gt_prom_publish(struct gt_prom *p, uint64_t now, int force) {
  if (!p || (!force && now - p->last_publish < GT_PROM_PUBLISH_NS))
    return;
  p->last_publish = now;
  pthread_mutex_lock(&p->mu);
  p->snap = p->live;
  pthread_mutex_unlock(&p->mu);
}

#ifdef GT_HAVE_MHD
/* ---- the exposition format ---- */

struct buf {
  char *s;
  size_t len, cap;
};

__attribute__((format(printf, 2, 3))) static void put(struct buf *b, const char *fmt,
                                                      ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0)
      return;
    if ((size_t)n < b->cap - b->len) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = (b->cap + (size_t)n + 1) * 2;
    char *s = realloc(b->s, cap);
    if (!s)
      return;
    b->s = s;
    b->cap = cap;
  }
}

static void gauge_gpu(struct buf *b, const char *name, const char *help,
                      const struct prom_counters *c, const double *v,
                      const uint8_t *has) {
  put(b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
  for (int g = 0; g < GT_PROM_MAX_GPUS; g++)
    if (c->gpu_seen[g] && has[g])
      put(b, "%s{gpu=\"%d\"} %.17g\n", name, g, v[g]);
}

/* The text of /metrics (malloc'd; *len set). */
static char *prom_format(const struct prom_counters *c, size_t *len) {
  struct buf b = {malloc(16384), 0, 16384};
  if (!b.s)
    return NULL;
  b.s[0] = '\0';
  put(&b,
      "# HELP gputrace_kernel_launches_total Kernel launches traced.\n"
      "# TYPE gputrace_kernel_launches_total counter\n"
      "gputrace_kernel_launches_total %llu\n",
      (unsigned long long)c->launches);
  put(&b, "# HELP gputrace_api_calls_total CUDA API calls traced, by API.\n"
          "# TYPE gputrace_api_calls_total counter\n");
  for (unsigned a = 1; a < GT_API_COUNT; a++)
    if (c->api_calls[a])
      put(&b, "gputrace_api_calls_total{api=\"%s\"} %llu\n", gt_api_name(a),
          (unsigned long long)c->api_calls[a]);
  put(&b, "# HELP gputrace_api_seconds Host time spent in CUDA API calls, by API.\n"
          "# TYPE gputrace_api_seconds summary\n");
  for (unsigned a = 1; a < GT_API_COUNT; a++)
    if (c->api_calls[a])
      put(&b,
          "gputrace_api_seconds_sum{api=\"%s\"} "
          "%.9f\ngputrace_api_seconds_count{api=\"%s\"} %llu\n",
          gt_api_name(a), (double)c->api_ns[a] / 1e9, gt_api_name(a),
          (unsigned long long)c->api_calls[a]);
  put(&b,
      "# HELP gputrace_memcpy_bytes_total Bytes copied by cudaMemcpy*, by direction.\n"
      "# TYPE gputrace_memcpy_bytes_total counter\n");
  for (unsigned d = 0; d < 6; d++)
    put(&b, "gputrace_memcpy_bytes_total{dir=\"%s\"} %llu\n", gt_dir_name(d),
        (unsigned long long)c->memcpy_bytes[d]);
  put(&b, "# HELP gputrace_device_memory_bytes Device memory allocated and not freed, by "
          "traced process.\n# TYPE gputrace_device_memory_bytes gauge\n");
  for (int i = 0; i < GT_PROM_MAX_PIDS; i++)
    if (c->pid[i])
      put(&b, "gputrace_device_memory_bytes{pid=\"%u\"} %llu\n", c->pid[i],
          (unsigned long long)c->pid_bytes[i]);
  put(&b,
      "# HELP gputrace_events_dropped_total Records the rings had no room for.\n"
      "# TYPE gputrace_events_dropped_total counter\n"
      "gputrace_events_dropped_total %llu\n",
      (unsigned long long)c->dropped);
  gauge_gpu(&b, "gputrace_gpu_utilization_percent", "GPU utilization (NVML).", c,
            c->gpu_util, c->has_util);
  gauge_gpu(&b, "gputrace_gpu_memory_used_bytes", "GPU memory used (NVML).", c,
            c->gpu_mem_used, c->has_mem);
  gauge_gpu(&b, "gputrace_gpu_memory_total_bytes", "GPU memory in all (NVML).", c,
            c->gpu_mem_total, c->has_total);
  gauge_gpu(&b, "gputrace_gpu_temperature_celsius", "GPU temperature (NVML).", c,
            c->gpu_temp, c->has_temp);
  gauge_gpu(&b, "gputrace_gpu_power_watts", "GPU power draw (NVML).", c, c->gpu_power,
            c->has_power);
  *len = b.len;
  return b.s;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_len, void **con_cls) {
  (void)version, (void)upload, (void)upload_len, (void)con_cls;
  struct gt_prom *p = cls;
  struct MHD_Response *resp;
  unsigned status = MHD_HTTP_OK;
  if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
    status = MHD_HTTP_METHOD_NOT_ALLOWED;
    resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
  } else if (strcmp(url, "/metrics")) {
    static const char msg[] = "gputrace-collector: metrics are at /metrics\n";
    status = MHD_HTTP_NOT_FOUND;
    resp = MHD_create_response_from_buffer(sizeof msg - 1, (void *)msg,
                                           MHD_RESPMEM_PERSISTENT);
  } else {
    struct prom_counters *c = malloc(sizeof *c);
    if (!c)
      return MHD_NO;
    pthread_mutex_lock(&p->mu);
    *c = p->snap;
    pthread_mutex_unlock(&p->mu);
    size_t len = 0;
    char *text = prom_format(c, &len);
    free(c);
    if (!text)
      return MHD_NO;
    resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (resp)
      MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                              "text/plain; version=0.0.4; charset=utf-8");
    else
      free(text);
  }
  if (!resp)
    return MHD_NO;
  enum MHD_Result ret = MHD_queue_response(conn, status, resp);
  MHD_destroy_response(resp);
  return ret;
}
#endif

struct gt_prom *gt_prom_start(const char *addr_port, char *err, size_t errlen) {
#ifndef GT_HAVE_MHD
  (void)addr_port;
  snprintf(err, errlen, "--prometheus: built without libmicrohttpd");
  return NULL;
#else
  char host[256];
  const char *colon = strrchr(addr_port, ':');
  if (!colon || colon == addr_port || (size_t)(colon - addr_port) >= sizeof host ||
      !colon[1]) {
    snprintf(err, errlen, "--prometheus %s: expected ADDR:PORT", addr_port);
    return NULL;
  }
  memcpy(host, addr_port, (size_t)(colon - addr_port));
  host[colon - addr_port] = '\0';
  if (host[0] == '[' && host[strlen(host) - 1] == ']') { /* [::1]:9400 */
    memmove(host, host + 1, strlen(host));
    host[strlen(host) - 1] = '\0';
  }
  struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *ai;
  int rc = getaddrinfo(host, colon + 1, &hints, &ai);
  if (rc != 0) {
    snprintf(err, errlen, "--prometheus %s: %s", addr_port, gai_strerror(rc));
    return NULL;
  }
  struct gt_prom *p = calloc(1, sizeof *p);
  if (!p) {
    freeaddrinfo(ai);
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  gt_map_init(&p->allocs);
  p->graphs = gt_graphs_new(NULL); /* counts only: no device times */
  pthread_mutex_init(&p->mu, NULL);
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD;
  if (ai->ai_family == AF_INET6)
    flags |= MHD_USE_IPv6;
  uint16_t port = ai->ai_family == AF_INET6
                      ? ntohs(((struct sockaddr_in6 *)(void *)ai->ai_addr)->sin6_port)
                      : ntohs(((struct sockaddr_in *)(void *)ai->ai_addr)->sin_port);
  p->daemon =
      MHD_start_daemon(flags, port, NULL, NULL, handle, p, MHD_OPTION_SOCK_ADDR,
                       ai->ai_addr, MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
  freeaddrinfo(ai);
  if (!p->daemon) {
    snprintf(err, errlen, "--prometheus %s: cannot listen there", addr_port);
    gt_map_free(&p->allocs);
    gt_graphs_free(p->graphs);
    pthread_mutex_destroy(&p->mu);
    free(p);
    return NULL;
  }
  return p;
#endif
}

void gt_prom_stop(struct gt_prom *p) {
  if (!p)
    return;
#ifdef GT_HAVE_MHD
  MHD_stop_daemon(p->daemon);
#endif
  gt_map_free(&p->allocs);
  gt_graphs_free(p->graphs);
  pthread_mutex_destroy(&p->mu);
  free(p);
}
