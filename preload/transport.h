/* transport.h — the shim's link to the collector (see protocol.h).
 *
 * Contract: gt_transport_prepare_env runs once in the constructor (it may
 * set environment variables so children find the same collector);
 * gt_transport_open creates the ring, connects — to a stand-alone collector
 * found at start-up (GPUTRACE_SOCKET_DIR), else starting a collector under
 * plain LD_PRELOAD when none listens — and hands the ring over. It is the
 * only function here that may block (bounded: a few seconds at most). */
#ifndef GPUTRACE_TRANSPORT_H
#define GPUTRACE_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "gputrace/ring.h"

void gt_transport_prepare_env(void);

/* Create a ring of about `bytes`, connect, hand it over. 0 on success; on
 * failure one warning has been printed and nothing is left open. */
int gt_transport_open(struct gt_ring *ring, size_t bytes, uint32_t pid);

/* In a forked child: drop the inherited mapping and socket (the parent's;
 * the socket only if its number still holds it). */
void gt_transport_forget(void);

/* 1 when the collector has closed the connection; 0 while it is open, or
 * when the program has closed our socket (we cannot tell then). */
int gt_transport_peer_gone(void);

/* One line on stderr unless GPUTRACE_QUIET=1 (core.c). */
void gt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
