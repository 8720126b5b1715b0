/* outfile.h — creating output files (traces, exports) without being led
 * into someone else's file. Used by the collector, `record` and `chrome`.
 *
 * Contract (as root in a shared directory every rule matters):
 *  - A symbolic link at the final component is never followed (O_NOFOLLOW),
 *    not even with force; the path's directories are the caller's choice.
 *  - GT_OUT_NEW creates the file (O_CREAT|O_EXCL, mode 0600) and refuses an
 *    existing one: an existing trace is overwritten only on request.
 *  - GT_OUT_FORCE also takes an existing file, if it is a regular file owned
 *    by us with one link (not a FIFO or device, not another user's file, not
 *    a hard link to some other name): truncated, and fchmod 0600 so a file
 *    someone pre-created 0666 does not stay readable.
 *  - GT_OUT_APPEND keeps an existing file (O_APPEND) under the same checks,
 *    or creates it.
 *  - An existing character device (/dev/null, /dev/full) is written as it
 *    is, in every mode: it is nobody's file, and only root makes them.
 *  - gt_out_pick creates a name gputrace chooses itself: PREFIX N SUFFIX for
 *    N = first, first + 1, ... with O_EXCL, taking the first that is free
 *    (a name planted by someone else, even a dangling link, is skipped).
 *  - Every opening never blocks (O_NONBLOCK until checked: a FIFO planted
 *    at the path does not hang us). Results are O_CLOEXEC descriptors, or
 *    -1 with a one-line message naming the path in err (and errno EEXIST
 *    when GT_OUT_NEW found the name taken, ELOOP for a symbolic link,
 *    EISDIR for a directory: "it is a directory", in every mode).
 *  - A name taken is refused with "it exists (not overwritten; HOW
 *    overwrites a file of yours)": HOW is what the front end's user types,
 *    "--force" unless gt_out_force_hint said otherwise (the collector the
 *    shim starts: GPUTRACE_FORCE=1). A hint must be true where it is read.
 */
#ifndef GPUTRACE_OUTFILE_H
#define GPUTRACE_OUTFILE_H

#include <stddef.h>

enum gt_out_mode { GT_OUT_NEW = 0, GT_OUT_FORCE = 1, GT_OUT_APPEND = 2 };

/* Before any opening, on one thread: HOW lives as long as the process. */
void gt_out_force_hint(const char *how);

int gt_out_open(const char *path, enum gt_out_mode mode, char *err, size_t errlen);
/* 0 when gt_out_open(path, mode) would take path now (absent, or there and
 * allowed), else -1 with its message and errno: nothing is created, opened
 * or changed (for an output written under another name, then renamed). */
int gt_out_check(const char *path, enum gt_out_mode mode, char *err, size_t errlen);

/* Writes the name taken to `chosen`. */
int gt_out_pick(const char *prefix, unsigned first, const char *suffix, char *chosen,
                size_t chosen_len, char *err, size_t errlen);

#endif
