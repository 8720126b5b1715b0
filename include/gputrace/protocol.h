/* protocol.h — how a traced process hands its ring to the collector.
 *
 * Contract:
 *  - The collector listens on a unix SOCK_SEQPACKET socket inside a 0700
 *    directory owned by the user. A traced process connects, sends one
 *    struct gt_hello with its ring's memfd attached (SCM_RIGHTS), and waits
 *    for one byte: GT_ACK_OK, or GT_ACK_REFUSED (another uid, bad ring), or
 *    GT_ACK_NO_FDS (the collector had no descriptor free for the memfd for
 *    3 s: at its hard RLIMIT_NOFILE). A shim of before GT_ACK_NO_FDS takes
 *    it as any byte but GT_ACK_OK (untraced, "Protocol error"); a collector
 *    of before never sends it (its shortage looked like a timeout).
 *  - The connection then stays open and silent. The collector tells the
 *    process's end by the process (a pidfd), not by this socket: the
 *    program may close the shim's descriptor (daemons close every
 *    descriptor they did not open) and go on writing its ring. An exec
 *    unmaps the ring (the collector looks in /proc/PID/maps when the socket
 *    closes) or connects again under the same pid. Nothing else is ever
 *    sent, so a dead collector can never block the traced process.
 *  - The collector answers within 5 s or refuses; a ring larger than
 *    GT_RING_MAX_BYTES is refused.
 *  - The memfd is sealed against shrinking (F_SEAL_SHRINK), so the
 *    collector's mapping cannot fault; the collector checks the seals.
 */
#ifndef GPUTRACE_PROTOCOL_H
#define GPUTRACE_PROTOCOL_H

#include <stdint.h>

#define GT_HELLO_MAGIC 0x4f4c4c4548544750ull /* "PGTHELLO" */
#define GT_PROTOCOL_VERSION 1u
#define GT_CMDLINE_MAX 1024u
#define GT_ACK_OK 'K'
#define GT_ACK_REFUSED 'R'
#define GT_ACK_NO_FDS 'F'
/* `record` to its collector, on the --control-fd pipe (whose EOF says the
 * command has exited): the command could not be run, so no closing line. */
#define GT_CONTROL_NEVER_RAN 'n'
/* The largest ring a collector maps (GPUTRACE_RING_KB's upper bound). */
#define GT_RING_MAX_BYTES (1ull << 30)

struct gt_hello {
  uint64_t magic;
  uint32_t version;
  uint32_t pid;
  uint32_t ppid;
  uint32_t cmdline_len; /* bytes used in cmdline; args separated by ' ' */
  uint64_t ring_bytes;  /* size of the attached memfd */
  uint64_t start_ns;    /* CLOCK_MONOTONIC when the ring was created */
  char cmdline[GT_CMDLINE_MAX];
};

/* Send `hello` with the ring's memfd attached and wait up to timeout_ms
 * for the answer: GT_ACK_OK, GT_ACK_REFUSED (or another byte); 0 when none
 * came, with errno ETIMEDOUT (none in time) or ECONNRESET (the collector
 * closed the connection unanswered); -1 when the hello could not be sent
 * (common/hello.c). */
int gt_hello_exchange(int sock, const struct gt_hello *hello, int memfd, int timeout_ms);

/* Environment shared by the CLI, the shim and the collector. */
#define GT_ENV_SOCKET "GPUTRACE_SOCKET"        /* collector socket path */
#define GT_ENV_OUTPUT "GPUTRACE_OUTPUT"        /* trace file (plain LD_PRELOAD) */
#define GT_ENV_PICKED "GPUTRACE_OUTPUT_PICKED" /* 1: the shim chose GPUTRACE_OUTPUT */
#define GT_ENV_RING_KB "GPUTRACE_RING_KB"      /* ring size per process */
#define GT_ENV_DISABLE "GPUTRACE_DISABLE"      /* 1: the shim forwards only */
#define GT_ENV_COLLECTOR "GPUTRACE_COLLECTOR"  /* path of gputrace-collector */
#define GT_ENV_QUIET "GPUTRACE_QUIET"          /* 1: no notes on stderr */
#define GT_ENV_LIB "GPUTRACE_LIB"              /* path of libgputrace.so (record) */
#define GT_ENV_PPROF_DIR "GPUTRACE_PPROF_DIR"  /* live profiles' folder (collector) */
#define GT_DEFAULT_RING_KB 32768u              /* ~510,000 launches */

/* The directory of a stand-alone collector's socket (paths.h). */
#define GT_ENV_SOCKET_DIR "GPUTRACE_SOCKET_DIR"

#endif
