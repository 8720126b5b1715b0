/* ipc_event.c — interprocess events: cudaIpcGetEventHandle and
 * cudaIpcOpenEventHandle.
 *
 * Contract:
 *  - Only an event created with cudaEventInterprocess (which requires
 *    cudaEventDisableTiming) has a handle; any other event, or an invalid
 *    one, is cudaErrorInvalidResourceHandle, a NULL handle pointer
 *    cudaErrorInvalidValue.
 *  - The first handle of an event moves its time into a page of its own
 *    (a memfd, MAP_SHARED); every record of the event, in any process that
 *    holds it, stores its time there and every query, synchronize and wait
 *    reads it there (si_event_ts / si_event_stamp). Device time is the
 *    host's CLOCK_MONOTONIC, one clock for all processes of the machine, so
 *    a time recorded in one process means the same in another.
 *  - A handle names the exporting process, the memfd's descriptor there and
 *    the page's unique id. cudaIpcOpenEventHandle opens the page through
 *    /proc/<pid>/fd/<fd> (the same user's processes on the same machine)
 *    and returns a new event with
 *    cudaEventDisableTiming | cudaEventInterprocess, which must be destroyed
 *    with cudaEventDestroy. A handle whose process, descriptor or page is
 *    gone (or another page is behind the descriptor now) fails with
 *    cudaErrorMapBufferObjectFailed, as the memory handles do (memory.c).
 *    In the exporting process itself the open is refused with
 *    cudaErrorDeviceUninitialized ("invalid device context", what the real
 *    runtime answers for its own IPC handles; never more lenient).
 *  - An opened event can be exported again (its handle names the opening
 *    process). Destroying the exporter's event closes its descriptor, so
 *    later opens fail; events already opened keep their page (the real
 *    runtime calls their use after the exporter's destroy undefined).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "standin.h"

#define PAGE_MAGIC 0x56454754u   /* the shared page: "TGEV" */
#define HANDLE_MAGIC 0x48454754u /* the handle: "TGEH" */

struct ipc_page {
  uint32_t magic;
  uint32_t pid; /* the process that made it */
  uint64_t id;  /* unique per page: (pid << 32) | counter */
  uint64_t ts;  /* the event's time (si_event_stamp), atomic */
};

struct ipc_handle { /* what a cudaIpcEventHandle_t holds here */
  uint32_t magic;
  uint32_t pid;
  int32_t fd;
  uint32_t pad;
  uint64_t id;
};
_Static_assert(sizeof(struct ipc_handle) <= sizeof(cudaIpcEventHandle_t),
               "fits a handle");

static pthread_mutex_t ipc_mu = PTHREAD_MUTEX_INITIALIZER; /* page creation */
static uint32_t page_counter;                              /* ipc_mu */

static struct ipc_page *page_of(const struct si_event *e) {
  uint64_t *ts = __atomic_load_n(&e->shared_ts, __ATOMIC_ACQUIRE);
  return ts ? (struct ipc_page *)((char *)ts - offsetof(struct ipc_page, ts)) : NULL;
}

static struct ipc_page *map_page(int fd) {
  void *p =
      mmap(NULL, sizeof(struct ipc_page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* Give e its shared page (ipc_mu held). */
static cudaError_t make_page(struct si_event *e) {
  int fd = memfd_create("gputrace-standin-ipc-event", MFD_CLOEXEC);
  if (fd < 0)
    return cudaErrorMemoryAllocation;
  struct ipc_page *pg = NULL;
  if (ftruncate(fd, (off_t)sizeof *pg) != 0 || (pg = map_page(fd)) == NULL) {
    close(fd);
    return cudaErrorMemoryAllocation;
  }
  pg->magic = PAGE_MAGIC;
  pg->pid = (uint32_t)getpid();
  pg->id = ((uint64_t)pg->pid << 32) | ++page_counter;
  pg->ts = __atomic_load_n(&e->ts, __ATOMIC_ACQUIRE); /* a record made before */
  e->ipc_fd1 = fd + 1;
  __atomic_store_n(&e->shared_ts, &pg->ts, __ATOMIC_RELEASE);
  return cudaSuccess;
}

SI_API cudaError_t cudaIpcGetEventHandle(cudaIpcEventHandle_t *handle,
                                         cudaEvent_t event) {
  if (handle == NULL)
    return si_ret(cudaErrorInvalidValue);
  struct si_event *e = si_event_resolve(event);
  if (e == NULL || !(e->flags & cudaEventInterprocess))
    return si_ret(cudaErrorInvalidResourceHandle);
  pthread_mutex_lock(&ipc_mu);
  cudaError_t err = page_of(e) ? cudaSuccess : make_page(e);
  struct ipc_handle h = {HANDLE_MAGIC, (uint32_t)getpid(), e->ipc_fd1 - 1, 0, 0};
  if (err == cudaSuccess)
    h.id = page_of(e)->id;
  pthread_mutex_unlock(&ipc_mu);
  if (err != cudaSuccess)
    return si_ret(err);
  memset(handle, 0, sizeof *handle);
  memcpy(handle, &h, sizeof h);
  return cudaSuccess;
}

/* The page a handle names, opened here: its descriptor, or -1. */
static int open_page(const struct ipc_handle *h, struct ipc_page **out) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%u/fd/%d", h->pid, h->fd);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  struct stat st;
  if (fd < 0)
    return -1;
  struct ipc_page *pg = NULL;
  if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof *pg ||
      (pg = map_page(fd)) == NULL || pg->magic != PAGE_MAGIC || pg->id != h->id) {
    if (pg != NULL)
      munmap(pg, sizeof *pg);
    close(fd);
    return -1;
  }
  *out = pg;
  return fd;
}

SI_API cudaError_t cudaIpcOpenEventHandle(cudaEvent_t *event,
                                          cudaIpcEventHandle_t handle) {
  if (event == NULL)
    return si_ret(cudaErrorInvalidValue);
  struct ipc_handle h;
  memcpy(&h, &handle, sizeof h);
  if (h.magic == HANDLE_MAGIC && h.pid == (uint32_t)getpid())
    return si_ret(cudaErrorDeviceUninitialized);
  struct ipc_page *pg = NULL;
  int fd = h.magic == HANDLE_MAGIC && h.fd >= 0 ? open_page(&h, &pg) : -1;
  if (fd < 0)
    return si_ret(cudaErrorMapBufferObjectFailed);
  struct si_event *e = si_event_new(cudaEventDisableTiming | cudaEventInterprocess);
  if (e == NULL) {
    munmap(pg, sizeof *pg);
    close(fd);
    return si_ret(cudaErrorMemoryAllocation);
  }
  e->ipc_fd1 = fd + 1;
  __atomic_store_n(&e->shared_ts, &pg->ts, __ATOMIC_RELEASE);
  *event = (cudaEvent_t)e;
  return cudaSuccess;
}

void si_ipc_event_release(struct si_event *e) {
  struct ipc_page *pg = page_of(e);
  if (pg == NULL)
    return;
  __atomic_store_n(&e->shared_ts, NULL, __ATOMIC_RELEASE);
  munmap(pg, sizeof *pg);
  close(e->ipc_fd1 - 1);
  e->ipc_fd1 = 0;
}
