/* progress.h — the progress line of the commands that read a whole trace,
 * the one printer of the session's progress callback (session.h).
 *
 * Contract:
 *  - Shown only when stderr is a terminal and, for a command that writes
 *    its stdout while it reads (dump, chrome -o -), stdout is not the same
 *    terminal: a pipe or a file never gets it, and nothing is interleaved
 *    with the command's own output.
 *  - The line is "\r<cmd>: 12.3 M of 20.0 M records (61 %)" on stderr, at
 *    most one update every 250 ms, and gt_progress_done erases it
 *    ("\r\033[K") so that what follows starts a clean line.
 *  - Costs one clock read per chunk when shown, nothing otherwise.
 */
#ifndef GPUTRACE_ANALYZE_PROGRESS_H
#define GPUTRACE_ANALYZE_PROGRESS_H

#include <stdint.h>

#include "session.h"

struct gt_progress {
  const char *cmd;
  uint64_t last_ns; /* when the line was last written */
  int shown;        /* the line is on the terminal */
};

/* Fill so->progress when the contract says to show it; `streams`: the
 * command writes stdout while it reads. */
void gt_progress_watch(struct gt_progress *p, const char *cmd, int streams,
                       struct gt_session_opts *so);
/* After the session has run: erase the line. */
void gt_progress_done(struct gt_progress *p);

#endif
