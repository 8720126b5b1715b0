/* symtab.c — see symtab.h. */
#include "symtab.h"

#include <stdlib.h>
#include <string.h>

#include "gputrace/map.h"
#include "gputrace/trace_file.h"
#include "util.h"

struct stack {
  uint32_t depth;
  uint32_t cut; /* GT_F_STACK_CUT */
  uint64_t entries[];
};

struct level {
  char *function, *file, *module;
  uint32_t line;
};

struct addr { /* the inline levels of one address */
  uint16_t count;
  struct level levels[];
};

struct pyframe {
  char *function, *file;
  uint32_t line;
};

struct module {
  uint32_t pid, epoch;
  uint64_t start, end, bias;
  char *path;
};

struct gt_symtab {
  struct gt_map stacks;   /* (pid, id) -> struct stack* */
  struct gt_map addrs;    /* (pid, ip) -> struct addr* */
  struct gt_map pyframes; /* (pid, id) -> struct pyframe* */
  struct module *modules; /* MODULE records, in arrival order */
  size_t nmodules, cmodules;
};

static char *xstrdup(const char *s) {
  char *p = strdup(s);
  if (!p)
    abort();
  return p;
}

struct gt_symtab *gt_symtab_new(void) {
  return gt_xcalloc(1, sizeof(struct gt_symtab));
}

static void free_levels(struct addr *a) {
  for (unsigned i = 0; i < a->count; i++) {
    free(a->levels[i].function);
    free(a->levels[i].file);
    free(a->levels[i].module);
  }
}

void gt_symtab_free(struct gt_symtab *t) {
  if (!t)
    return;
  for (size_t i = 0; i < t->stacks.cap; i++)
    if (t->stacks.used[i] == 1)
      free((void *)(uintptr_t)t->stacks.vals[i]);
  for (size_t i = 0; i < t->addrs.cap; i++)
    if (t->addrs.used[i] == 1) {
      struct addr *a = (void *)(uintptr_t)t->addrs.vals[i];
      free_levels(a);
      free(a);
    }
  for (size_t i = 0; i < t->pyframes.cap; i++)
    if (t->pyframes.used[i] == 1) {
      struct pyframe *p = (void *)(uintptr_t)t->pyframes.vals[i];
      free(p->function);
      free(p->file);
      free(p);
    }
  for (size_t i = 0; i < t->nmodules; i++)
    free(t->modules[i].path);
  free(t->modules);
  gt_map_free(&t->stacks);
  gt_map_free(&t->addrs);
  gt_map_free(&t->pyframes);
  free(t);
}

/* Split "a\x1fb\x1fc" in place into up to n fields ("" when missing). */
static void split(char *text, char **fields, int n) {
  for (int i = 0; i < n; i++) {
    fields[i] = text;
    char *sep = strchr(text, '\x1f');
    if (sep) {
      *sep = '\0';
      text = sep + 1;
    } else {
      text += strlen(text);
    }
  }
}

static void feed_stack(struct gt_symtab *t, const struct gt_record *r) {
  uint32_t depth = r->u.stack.depth;
  size_t have = (size_t)(r->nslots - 1) * GT_TEXT_PER_SLOT / sizeof(uint64_t);
  if (depth > have)
    depth = (uint32_t)have;
  uint64_t key = gt_pid_key(r->pid, r->u.stack.id), old;
  if (gt_map_get(&t->stacks, key, &old))
    return; /* ids are unique per process: a repeat is the same stack */
  struct stack *s = gt_xcalloc(1, sizeof *s + depth * sizeof(uint64_t));
  s->depth = depth;
  s->cut = (r->flags & GT_F_STACK_CUT) != 0;
  const struct gt_text_slot *slots = (const void *)(r + 1);
  for (uint32_t i = 0; i < depth; i++) {
    size_t off = (size_t)i * sizeof(uint64_t);
    memcpy(&s->entries[i], slots[off / GT_TEXT_PER_SLOT].text + off % GT_TEXT_PER_SLOT,
           sizeof(uint64_t));
  }
  gt_map_put(&t->stacks, key, (uint64_t)(uintptr_t)s);
}

static void feed_frame(struct gt_symtab *t, const struct gt_record *r) {
  unsigned count = r->u.frame.inline_count, level = r->u.frame.level;
  if (count == 0 || level >= count)
    return;
  uint64_t key = gt_pid_key(r->pid, r->u.frame.ip), v;
  struct addr *a;
  if (gt_map_get(&t->addrs, key, &v)) {
    a = (void *)(uintptr_t)v;
    if (a->count != count || a->levels[level].function)
      return; /* inconsistent or repeated: keep the first */
  } else {
    a = gt_xcalloc(1, sizeof *a + count * sizeof(struct level));
    a->count = (uint16_t)count;
    gt_map_put(&t->addrs, key, (uint64_t)(uintptr_t)a);
  }
  char text[GT_TEXT_MAX + 1], *f[3];
  gt_record_text(r, r->u.frame.text_len, text, sizeof text);
  split(text, f, 3);
  a->levels[level] =
      (struct level){xstrdup(f[0]), xstrdup(f[1]), xstrdup(f[2]), r->u.frame.line};
}

static void feed_pyframe(struct gt_symtab *t, const struct gt_record *r) {
  uint64_t key = gt_pid_key(r->pid, r->u.pyframe.id);
  if (gt_map_get(&t->pyframes, key, NULL))
    return;
  char text[GT_TEXT_MAX + 1], *f[2];
  gt_record_text(r, r->u.pyframe.text_len, text, sizeof text);
  split(text, f, 2);
  struct pyframe *p = gt_xcalloc(1, sizeof *p);
  *p = (struct pyframe){xstrdup(f[0]), xstrdup(f[1]), r->u.pyframe.line};
  gt_map_put(&t->pyframes, key, (uint64_t)(uintptr_t)p);
}

static void feed_module(struct gt_symtab *t, const struct gt_record *r) {
  char path[GT_TEXT_MAX + 1];
  gt_record_text(r, r->u.module.text_len, path, sizeof path);
  if (r->u.module.start >= r->u.module.end)
    return;
  t->modules = gt_grow(t->modules, &t->cmodules, t->nmodules + 1, sizeof *t->modules);
  t->modules[t->nmodules++] =
      (struct module){r->pid,          r->u.module.epoch, r->u.module.start,
                      r->u.module.end, r->u.module.bias,  xstrdup(path)};
}

int gt_symtab_module_of(const struct gt_symtab *t, uint32_t pid, uint64_t entry,
                        struct gt_module_range *out) {
  uint64_t ip = gt_stack_addr(entry);
  uint32_t epoch = gt_stack_epoch(entry);
  /* the latest mapping of the address found in the entry's epoch or before
   * it (schema.h) */
  for (size_t i = t->nmodules; i-- > 0;) {
    const struct module *m = &t->modules[i];
    if (m->pid == pid && m->epoch <= epoch && ip >= m->start && ip < m->end) {
      *out = (struct gt_module_range){m->start, m->end, m->bias, m->path};
      return 1;
    }
  }
  return 0;
}

void gt_symtab_feed(struct gt_symtab *t, const struct gt_record *r) {
  switch (r->kind) {
  case GT_KIND_MODULE:
    feed_module(t, r);
    break;
  case GT_KIND_STACK:
    feed_stack(t, r);
    break;
  case GT_KIND_FRAME:
    feed_frame(t, r);
    break;
  case GT_KIND_PYFRAME:
    feed_pyframe(t, r);
    break;
  default:
    break;
  }
}

static int expand(struct gt_symtab *t, uint32_t pid, uint64_t entry, struct gt_frame *out,
                  int room) {
  uint64_t v;
  if (entry & GT_STACK_PYFRAME) {
    uint32_t id = (uint32_t)(entry & 0xffffffffu);
    if (!gt_map_get(&t->pyframes, gt_pid_key(pid, id), &v)) {
      out[0] = (struct gt_frame){"<python>", "", "", 0, 1, 0};
      return 1;
    }
    struct pyframe *p = (void *)(uintptr_t)v;
    out[0] = (struct gt_frame){p->function, p->file, "", p->line, 1, 0};
    return 1;
  }
  if (!gt_map_get(&t->addrs, gt_pid_key(pid, entry), &v)) {
    out[0] = (struct gt_frame){"??", "", "", 0, 0, entry};
    return 1;
  }
  struct addr *a = (void *)(uintptr_t)v;
  int n = 0;
  for (unsigned i = 0; i < a->count && n < room; i++) {
    const struct level *l = &a->levels[i];
    out[n++] = (struct gt_frame){l->function ? l->function : "??",
                                 l->file ? l->file : "",
                                 l->module ? l->module : "",
                                 l->line,
                                 0,
                                 entry};
  }
  return n;
}

const char *gt_symtab_function(struct gt_symtab *t, uint32_t pid, uint64_t ip) {
  uint64_t v;
  if (!t || !gt_map_get(&t->addrs, gt_pid_key(pid, ip), &v))
    return NULL;
  const struct addr *a = (const void *)(uintptr_t)v;
  const char *f = a->count ? a->levels[a->count - 1].function : NULL;
  return f && strcmp(f, "??") != 0 ? f : NULL;
}

int gt_symtab_stack(struct gt_symtab *t, uint32_t pid, uint32_t stack_id,
                    struct gt_frame *out, int max) {
  uint64_t v;
  if (stack_id == 0 || !gt_map_get(&t->stacks, gt_pid_key(pid, stack_id), &v))
    return 0;
  const struct stack *s = (const void *)(uintptr_t)v;
  int n = 0;
  for (uint32_t i = 0; i < s->depth && n < max; i++)
    n += expand(t, pid, s->entries[i], out + n, max - n);
  if (s->cut && n < max) /* the callers the unwinder could not reach */
    out[n++] = (struct gt_frame){GT_STACK_CUT_NAME, "", "", 0, 0, 0};
  return n;
}
