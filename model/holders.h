/* holders.h — who holds device memory, when it is not the program itself:
 * caching allocators and libraries whose allocations are pools or
 * workspaces, not the program's data (PyTorch's caching allocator and
 * the like).
 *
 * Contract: gt_holder_of looks at an allocation's frames (innermost first,
 * symbolized: symtab.h) and returns the first known holder whose function
 * name or module matches, or NULL. The table lives in holders.c, one line
 * per holder: an id (for JSON), a name and what it means for the reader.
 * A match is by frame, so it needs stacks (GPUTRACE_STACKS, default on for
 * allocations) and symbols (the collector's). */
#ifndef GPUTRACE_MODEL_HOLDERS_H
#define GPUTRACE_MODEL_HOLDERS_H

#include "symtab.h"

struct gt_holder {
  const char *id;      /* "pytorch_caching_allocator" */
  const char *name;    /* "PyTorch's caching allocator" */
  const char *meaning; /* one sentence: what the bytes are, what to do */
  const char *function_has, *module_prefix; /* what a frame matches on */
};

const struct gt_holder *gt_holder_of(const struct gt_frame *frames, int n);
/* The same for a stack id of a process (NULL without frames). */
const struct gt_holder *gt_holder_of_stack(struct gt_symtab *t, uint32_t pid,
                                           uint32_t stack_id);

#endif
