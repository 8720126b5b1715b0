/* symtab.h — stacks and their symbols, as the trace carries them.
 *
 * Contract: feed every record; STACK, FRAME, PYFRAME and MODULE records are kept
 * (per process), others ignored. gt_symtab_stack expands a stack id into
 * frames, innermost first, inline levels and Python frames included; names
 * stay valid until gt_symtab_free. Records may come in any order: a stack
 * can be expanded once the whole trace has been fed. Memory is bounded by
 * the distinct stacks, addresses and Python frames. A native frame's ip is
 * its stack entry: the address with its address epoch (schema.h,
 * GT_STACK_EPOCH_SHIFT; gt_stack_addr gives the address). A stack the shim
 * cut short (GT_F_STACK_CUT) ends with a frame named GT_STACK_CUT_NAME. */
#ifndef GPUTRACE_MODEL_SYMTAB_H
#define GPUTRACE_MODEL_SYMTAB_H

#include <stdint.h>

#include "gputrace/schema.h"

struct gt_symtab;

#define GT_STACK_CUT_NAME "[stack cut short]"

struct gt_frame {
  const char *function; /* "??" when unknown */
  const char *file;     /* "" when unknown */
  const char *module;   /* "" when unknown */
  uint32_t line;        /* 0 when unknown */
  int python;
  uint64_t
      ip; /* native frames: the stack entry (address and epoch); 0 for the cut mark */
};

struct gt_symtab *gt_symtab_new(void);
void gt_symtab_free(struct gt_symtab *t);
void gt_symtab_feed(struct gt_symtab *t, const struct gt_record *rec);
/* The object a stack entry of a process falls in (the MODULE records of
 * its address epoch): its range, load bias and path; 0 when unknown. */
struct gt_module_range {
  uint64_t start, end, bias;
  const char *path;
};
int gt_symtab_module_of(const struct gt_symtab *t, uint32_t pid, uint64_t entry,
                        struct gt_module_range *out);
/* The function a code address is in (the outermost of its inline levels),
 * from the FRAME records of `ip`; NULL when the trace has none or it is
 * unknown ("??"). A host function's name: the collector symbolizes its
 * address + 1 (collector/clients.c), so ask for fn + 1. */
const char *gt_symtab_function(struct gt_symtab *t, uint32_t pid, uint64_t ip);
/* Frames of a stack, innermost first; returns how many were written. */
int gt_symtab_stack(struct gt_symtab *t, uint32_t pid, uint32_t stack_id,
                    struct gt_frame *out, int max);

#endif
