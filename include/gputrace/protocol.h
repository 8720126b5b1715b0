/* protocol.h — how a traced process hands its ring to the collector.
 *
 * Contract:
 *  - The collector listens on a unix SOCK_SEQPACKET socket inside a 0700
 *    directory owned by the user. A traced process connects, sends one
 *    struct gt_hello with its ring's memfd attached (SCM_RIGHTS), and waits
 *    for one struct gt_answer: GT_ACK_OK, or GT_ACK_REFUSED (another uid,
 *    bad ring), GT_ACK_NO_FDS (the collector had no descriptor free for the
 *    memfd for 3 s: at its hard RLIMIT_NOFILE) or GT_ACK_CONTRACT (below),
 *    with the collector's contract after the code.
 *  - The contract (struct gt_contract): the protocol version, the ring's
 *    layout version and the counts of record kinds and APIs the two sides
 *    were built with (schema.h, apis.h: a record's kind and api are indexes
 *    into those tables). The hello carries the shim's; the collector maps a
 *    ring only when every field equals its own, else answers
 *    GT_ACK_CONTRACT and leaves a NOTE flagged untraced; the shim says so in
 *    one line and runs the program untraced. A shim never traces into a
 *    collector that would misread its ring, and neither side guesses.
 *  - Older peers (protocol 1: a hello of 1064 bytes with no contract, a
 *    one-byte answer). The contract's protocol lies where version 1's
 *    `version` did, so a version 1 hello is told by it and refused with
 *    GT_ACK_CONTRACT, its other fields unread; a protocol 1 shim takes any
 *    byte but GT_ACK_OK as a refusal (untraced, "Protocol error") and reads
 *    only the answer's first byte (a SOCK_SEQPACKET message is cut to what
 *    recv asks for). A protocol 1 collector refuses a version 2 hello (its
 *    size) with a one-byte GT_ACK_REFUSED: an answer of one byte is a
 *    collector of protocol 1 (gt_hello_exchange).
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

#include <stddef.h>
#include <stdint.h>

#include "gputrace/apis.h"
#include "gputrace/ring.h"
#include "gputrace/schema.h"

#define GT_HELLO_MAGIC 0x4f4c4c4548544750ull /* "PGTHELLO" */
#define GT_PROTOCOL_VERSION 2u /* 2: the contract in the hello and the answer */
#define GT_CMDLINE_MAX 1024u
#define GT_ACK_OK 'K'
#define GT_ACK_REFUSED 'R'
#define GT_ACK_NO_FDS 'F'
#define GT_ACK_CONTRACT 'C' /* refused: the contracts differ */
/* Bytes of a protocol 1 hello (magic, version, pid, ppid, cmdline_len,
 * ring_bytes, start_ns, cmdline). */
#define GT_HELLO_V1_BYTES 1064u
/* `record` to its collector, on the --control-fd pipe (whose EOF says the
 * command has exited): the command could not be run, so no closing line. */
#define GT_CONTROL_NEVER_RAN 'n'
/* ... and the command died of a signal: this byte, the signal (one byte),
 * the command's pid (4 bytes, host order), written at once before the EOF. */
#define GT_CONTROL_DIED 'k'
#define GT_CONTROL_DIED_BYTES 6u
/* The largest ring a collector maps (GPUTRACE_RING_KB's upper bound). */
#define GT_RING_MAX_BYTES (1ull << 30)

/* What the shim and the collector must agree on to share a ring. */
struct gt_contract {
  uint32_t protocol; /* GT_PROTOCOL_VERSION */
  uint32_t ring;     /* GT_RING_VERSION */
  uint32_t kinds;    /* GT_KIND_COUNT */
  uint32_t apis;     /* GT_API_COUNT */
};

/* The kind count this side claims: GT_KIND_COUNT, except in the tests'
 * skewed collector (tests/CMakeLists.txt), built to claim another. */
#ifndef GT_CONTRACT_KINDS
#define GT_CONTRACT_KINDS GT_KIND_COUNT
#endif

static inline struct gt_contract gt_contract_ours(void) {
  struct gt_contract c = {GT_PROTOCOL_VERSION, GT_RING_VERSION, GT_CONTRACT_KINDS,
                          GT_API_COUNT};
  return c;
}

static inline int gt_contract_equal(const struct gt_contract *a,
                                    const struct gt_contract *b) {
  return a->protocol == b->protocol && a->ring == b->ring && a->kinds == b->kinds &&
         a->apis == b->apis;
}

/* "2/3/23/180" (protocol/ring/kinds/APIs), or "1" for a protocol 1 peer,
 * which says no more (common/hello.c). */
void gt_contract_format(const struct gt_contract *c, char *out, size_t len);

struct gt_hello {
  uint64_t magic;
  struct gt_contract contract; /* contract.protocol where version 1 had `version` */
  uint32_t pid;
  uint32_t ppid;
  uint32_t cmdline_len; /* bytes used in cmdline; args separated by ' ' */
  uint32_t reserved;    /* 0 */
  uint64_t ring_bytes;  /* size of the attached memfd */
  uint64_t start_ns;    /* CLOCK_MONOTONIC when the ring was created */
  char cmdline[GT_CMDLINE_MAX];
};
_Static_assert(offsetof(struct gt_hello, contract.protocol) == 8,
               "the protocol version where version 1 had it");
_Static_assert(sizeof(struct gt_hello) == 1080 &&
                   sizeof(struct gt_hello) != GT_HELLO_V1_BYTES,
               "a hello's size tells its version");

/* The collector's answer: one message. */
struct gt_answer {
  uint8_t ack; /* GT_ACK_* */
  uint8_t reserved[3];
  struct gt_contract contract; /* the collector's */
};

/* Send `hello` with the ring's memfd attached and wait up to timeout_ms
 * for the answer: GT_ACK_OK, GT_ACK_REFUSED, GT_ACK_CONTRACT (or another
 * byte), with the collector's contract in *theirs (a one-byte answer, a
 * protocol 1 collector's: protocol 1, the rest 0); 0 when none came, with
 * errno ETIMEDOUT (none in time) or ECONNRESET (the collector closed the
 * connection unanswered); -1 when the hello could not be sent
 * (common/hello.c). */
int gt_hello_exchange(int sock, const struct gt_hello *hello, int memfd, int timeout_ms,
                      struct gt_contract *theirs);

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

/* The flight recorder's control socket (collector/control.c, `gputrace
 * snapshot`; its path: paths.h): one request per connection, "snapshot
 * LAST_NS\n" (0: the whole window) with the snapshot's file descriptor
 * attached (SCM_RIGHTS), from the collector's own uid; the answer, one
 * line: "ok RECORDS BYTES SEGMENTS SPAN_NS\n" or "error WHY\n". */
#define GT_CTL_SNAPSHOT "snapshot"
/* `gputrace start`/`stop` (analyze/cmd_start.c): "start\n" with the file's
 * descriptor switches the recorder to full recording into it (answer: "ok
 * RECORDS BYTES 1 0", what the file holds so far); "stop\n" finishes the
 * file and goes back to the window (answer: what the file holds, SPAN_NS
 * its time). A start while recording, or a stop while not, answers
 * "error " GT_CTL_ALREADY / GT_CTL_NOT_RECORDING "...": a usage error. */
#define GT_CTL_START "start"
#define GT_CTL_STOP "stop"
#define GT_CTL_ALREADY "already recording"
#define GT_CTL_NOT_RECORDING "not recording"
/* The NOTE each switch leaves in the trace (report lists them). */
#define GT_NOTE_STARTED "recording started by gputrace start"
#define GT_NOTE_STOPPED "recording stopped by gputrace stop"
/* Opens a snapshot cut by --last, stamped where the cut is (flight.c). */
#define GT_NOTE_WINDOW "flight recorder snapshot: the records from here on"
#define GT_CTL_LINE_MAX 512

#endif
