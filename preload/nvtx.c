/* nvtx.c — NVTX markers and ranges, received through the NVTX injection
 * interface (kind NVTX).
 *
 * Contract:
 *  - The core points NVTX_INJECTION64_PATH at this library; on the first
 *    NVTX call of each NVTX instance the loader calls the exported
 *    InitializeInjectionNvtx2, which writes our handlers into the CORE and
 *    CORE2 callback tables (slots checked against the size the loader
 *    reports). It returns 1 when the CORE table was filled, else 0 (the
 *    loader then turns every NVTX call into a no-op).
 *  - Return values follow nvToolsExt.h, traced or not: RangeStart ids are
 *    unique in the process (an atomic counter from 1); RangePush returns
 *    the 0-based level of the range it opens; RangePop returns the level of
 *    the range it closes, or -1 when none is open. Levels are counted per
 *    thread and per domain (domains beyond GT_NVTX_STACKS - 1 share one
 *    counter).
 *  - Records: ts = the call time, dur 0, op (enum gt_nvtx_op), domain (0 =
 *    default, else the small id DomainCreate gave it), range_id
 *    (start/end), depth (push/pop: the level returned), color (when ARGB),
 *    text = the message: ASCII as is, REGISTERED resolved, UNICODE through
 *    wcstombs into a stack buffer ("<unicode>" when that fails).
 *    The W (wide) entry points are handled too and recorded under the API
 *    id of their A twin, so that push/pop levels stay consistent.
 *  - DomainCreate and DomainRegisterString allocate (interned, never freed,
 *    lock-free lists); the handles they return point at our own nodes.
 *    The marker and range handlers do not allocate or lock.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "range.h"
#include "shim.h"

#define GT_NVTX_STACKS 64 /* per-thread push levels: default + 63 domains */
#define GT_NVTX_MAGIC_STR 0x5254535854564e47ull /* "GNVTXSTR" */
#define GT_NVTX_MAGIC_DOM 0x4d4f445854564e47ull /* "GNVTXDOM" */

static __thread int tls_levels[GT_NVTX_STACKS] __attribute__((tls_model("initial-exec")));
/* Capture range by NVTX name (range.h): which push levels of which stack
 * opened one (levels past 63 are not tracked), and which start ids did. */
static __thread uint64_t tls_range_levels[GT_NVTX_STACKS]
    __attribute__((tls_model("initial-exec")));
#define GT_NVTX_RANGE_IDS 64
static _Atomic uint64_t g_range_ids[GT_NVTX_RANGE_IDS];
static _Atomic uint64_t g_next_range_id = 1;

/* ---- interned strings and domains ---- */

struct nvtx_node { /* a registered string or a domain */
  uint64_t magic;
  struct nvtx_node *next;
  uint32_t id; /* domains: 1, 2, ... */
  uint32_t len;
  char text[];
};

static _Atomic(struct nvtx_node *) g_strings;
static _Atomic(struct nvtx_node *) g_domains;
static _Atomic uint32_t g_next_domain_id = 1;

static struct nvtx_node *find_node(struct nvtx_node *n, const char *text, size_t len) {
  for (; n != NULL; n = n->next)
    if (n->len == len && memcmp(n->text, text, len) == 0)
      return n;
  return NULL;
}

/* The node for `text` in `list`, added when missing; NULL if out of memory. */
static struct nvtx_node *intern(_Atomic(struct nvtx_node *) *list, uint64_t magic,
                                const char *text) {
  if (text == NULL)
    text = "";
  size_t len = strnlen(text, GT_TEXT_MAX);
  struct nvtx_node *head = atomic_load_explicit(list, memory_order_acquire);
  struct nvtx_node *found = find_node(head, text, len);
  if (found != NULL)
    return found;
  struct nvtx_node *n = malloc(sizeof *n + len + 1);
  if (n == NULL)
    return NULL;
  n->magic = magic;
  n->id = 0;
  n->len = (uint32_t)len;
  memcpy(n->text, text, len);
  n->text[len] = '\0';
  do {
    found = find_node(head, text, len); /* someone else added it meanwhile? */
    if (found != NULL) {
      free(n);
      return found;
    }
    n->next = head;
  } while (!atomic_compare_exchange_weak_explicit(list, &head, n, memory_order_acq_rel,
                                                  memory_order_acquire));
  return n;
}

static const struct nvtx_node *node_of(const void *handle, uint64_t magic) {
  const struct nvtx_node *n = handle;
  return n != NULL && n->magic == magic ? n : NULL;
}

static uint32_t domain_id(nvtxDomainHandle_t domain) {
  const struct nvtx_node *n = node_of(domain, GT_NVTX_MAGIC_DOM);
  return n != NULL ? n->id : 0;
}

/* Wide to multibyte into buf (cap >= 1); NULL when not convertible. */
static const char *narrow(const wchar_t *w, char *buf, size_t cap) {
  if (w == NULL)
    return "";
  size_t n = wcstombs(buf, w, cap - 1);
  if (n == (size_t)-1)
    return NULL;
  buf[n] = '\0'; /* wcstombs leaves it out when the output was cut */
  return buf;
}

/* ---- records ---- */

struct nvtx_msg {
  const char *text;
  size_t len;
  uint32_t color;
};

/* Wide text narrowed to UTF-8, off the program's stack (docs/stack-budget.md):
 * used with the recursion guard held (trace(), claim_narrow), so a signal
 * handler's NVTX call meanwhile does not write over it. */
static __thread char tls_narrow[GT_TEXT_MAX + 1]
    __attribute__((tls_model("initial-exec")));

static void msg_text(struct nvtx_msg *m, const char *text) {
  m->text = text != NULL ? text : "";
  m->len = strlen(m->text);
}

static void msg_wide(struct nvtx_msg *m, const wchar_t *text) {
  const char *s = narrow(text, tls_narrow, sizeof tls_narrow);
  msg_text(m, s != NULL ? s : "<unicode>");
}

static void msg_attr(struct nvtx_msg *m, const nvtxEventAttributes_t *a) {
  msg_text(m, "");
  if (a == NULL || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof a->message)
    return;
  if (a->colorType == NVTX_COLOR_ARGB)
    m->color = a->color;
  switch (a->messageType) {
  case NVTX_MESSAGE_TYPE_ASCII:
    msg_text(m, a->message.ascii);
    break;
  case NVTX_MESSAGE_TYPE_UNICODE:
    msg_wide(m, a->message.unicode);
    break;
  case NVTX_MESSAGE_TYPE_REGISTERED: {
    const struct nvtx_node *s = node_of(a->message.registered, GT_NVTX_MAGIC_STR);
    if (s != NULL) {
      m->text = s->text;
      m->len = s->len;
    } else {
      msg_text(m, "<registered>");
    }
    break;
  }
  default:
    break;
  }
}

enum msg_form { MSG_NONE, MSG_ASCII, MSG_WIDE, MSG_ATTR };

struct nvtx_event {
  unsigned api;
  uint32_t op;
  uint32_t domain;
  uint64_t range_id;
  int32_t depth;
  enum msg_form form;
  const void *msg; /* char *, wchar_t * or nvtxEventAttributes_t * */
};

static uint64_t *range_levels_of(uint32_t domain) {
  return &tls_range_levels[domain < GT_NVTX_STACKS ? domain : GT_NVTX_STACKS - 1];
}

/* A capture range by NVTX name: a push or start of the name opens one
 * (before its record is written): a push on its thread only, a start
 * (which another thread may end) on every thread. 1 when this end closes
 * one, 2 when this pop closes its thread's (after its record is). */
static int range_opens_or_closes(const struct nvtx_event *e, const struct nvtx_msg *m) {
  uint64_t *levels = range_levels_of(e->domain);
  uint64_t bit = e->depth >= 0 && e->depth < 64 ? 1ull << e->depth : 0;
  switch (e->op) {
  case GT_NVTX_PUSH:
  case GT_NVTX_START:
    if (!gt_range_nvtx_matches(m->text, m->len))
      return 0;
    if (e->op == GT_NVTX_PUSH) {
      if (!bit)
        return 0;
      *levels |= bit;
      gt_tls_range++;
      return 0;
    } else {
      size_t i = 0;
      uint64_t none = 0;
      while (i < GT_NVTX_RANGE_IDS &&
             !atomic_compare_exchange_strong(&g_range_ids[i], &none, e->range_id))
        i++, none = 0;
      if (i == GT_NVTX_RANGE_IDS)
        return 0; /* too many open at once: this one is not a range */
    }
    gt_range_open();
    return 0;
  case GT_NVTX_POP:
    if (!(*levels & bit))
      return 0;
    *levels &= ~bit;
    return 2;
  case GT_NVTX_END:
    for (size_t i = 0; i < GT_NVTX_RANGE_IDS; i++) {
      uint64_t id = e->range_id;
      if (id && atomic_compare_exchange_strong(&g_range_ids[i], &id, 0))
        return 1;
    }
    return 0;
  default:
    return 0;
  }
}

/* Record one NVTX event when tracing; errno is preserved. */
static void trace(const struct nvtx_event *e) {
  if (!gt_hook_enter())
    return;
  int saved_errno = errno;
  uint64_t now = gt_now();
  struct nvtx_msg m = {"", 0, 0};
  switch (e->form) {
  case MSG_ASCII:
    msg_text(&m, e->msg);
    break;
  case MSG_WIDE:
    msg_wide(&m, e->msg);
    break;
  case MSG_ATTR:
    msg_attr(&m, e->msg);
    break;
  case MSG_NONE:
    break;
  }
  int closes = gt_range_mode == GT_RANGE_NVTX ? range_opens_or_closes(e, &m) : 0;
  struct gt_record rec;
  gt_record_begin(&rec, e->api, now, now, 0);
  rec.u.nvtx.op = e->op;
  rec.u.nvtx.domain = e->domain;
  rec.u.nvtx.range_id = e->range_id;
  rec.u.nvtx.depth = e->depth;
  rec.u.nvtx.color = m.color;
  if (m.len > 0)
    gt_emit_text(&rec, m.text, m.len);
  else
    gt_emit(&rec);
  if (closes == 1)
    gt_range_close(); /* after its record: the range holds its own end */
  else if (closes == 2)
    gt_tls_range--;
  gt_hook_leave();
  errno = saved_errno;
}

/* trace() of the event these fields make. */
static inline __attribute__((always_inline)) void
trace_event(unsigned api, uint32_t op, uint32_t domain, uint64_t range_id, int32_t depth,
            enum msg_form form, const void *msg) {
  const struct nvtx_event e = {.api = api,
                               .op = op,
                               .domain = domain,
                               .range_id = range_id,
                               .depth = depth,
                               .form = form,
                               .msg = msg};
  trace(&e);
}

/* ---- levels and ids ---- */

static int *levels_of(uint32_t domain) {
  return &tls_levels[domain < GT_NVTX_STACKS ? domain : GT_NVTX_STACKS - 1];
}

static int push_level(uint32_t domain) {
  return (*levels_of(domain))++;
}

static int pop_level(uint32_t domain) {
  int *l = levels_of(domain);
  return *l > 0 ? --*l : -1;
}

static nvtxRangeId_t new_range_id(void) {
  return atomic_fetch_add_explicit(&g_next_range_id, 1, memory_order_relaxed);
}

/* ---- CORE handlers (default domain) ---- */

static void mark_ex(const nvtxEventAttributes_t *a) {
  trace_event(GT_API_nvtxMarkEx, GT_NVTX_MARK, 0, 0, 0, MSG_ATTR, a);
}

static void mark_a(const char *message) {
  trace_event(GT_API_nvtxMarkA, GT_NVTX_MARK, 0, 0, 0, MSG_ASCII, message);
}

static void mark_w(const wchar_t *message) {
  trace_event(GT_API_nvtxMarkA, GT_NVTX_MARK, 0, 0, 0, MSG_WIDE, message);
}

static nvtxRangeId_t range_start_ex(const nvtxEventAttributes_t *a) {
  nvtxRangeId_t id = new_range_id();
  trace_event(GT_API_nvtxRangeStartEx, GT_NVTX_START, 0, id, 0, MSG_ATTR, a);
  return id;
}

static nvtxRangeId_t range_start_a(const char *message) {
  nvtxRangeId_t id = new_range_id();
  trace_event(GT_API_nvtxRangeStartA, GT_NVTX_START, 0, id, 0, MSG_ASCII, message);
  return id;
}

static nvtxRangeId_t range_start_w(const wchar_t *message) {
  nvtxRangeId_t id = new_range_id();
  trace_event(GT_API_nvtxRangeStartA, GT_NVTX_START, 0, id, 0, MSG_WIDE, message);
  return id;
}

static void range_end(nvtxRangeId_t id) {
  trace_event(GT_API_nvtxRangeEnd, GT_NVTX_END, 0, id, 0, MSG_NONE, NULL);
}

static int range_push_ex(const nvtxEventAttributes_t *a) {
  int level = push_level(0);
  trace_event(GT_API_nvtxRangePushEx, GT_NVTX_PUSH, 0, 0, level, MSG_ATTR, a);
  return level;
}

static int range_push_a(const char *message) {
  int level = push_level(0);
  trace_event(GT_API_nvtxRangePushA, GT_NVTX_PUSH, 0, 0, level, MSG_ASCII, message);
  return level;
}

static int range_push_w(const wchar_t *message) {
  int level = push_level(0);
  trace_event(GT_API_nvtxRangePushA, GT_NVTX_PUSH, 0, 0, level, MSG_WIDE, message);
  return level;
}

static int range_pop(void) {
  int level = pop_level(0);
  trace_event(GT_API_nvtxRangePop, GT_NVTX_POP, 0, 0, level, MSG_NONE, NULL);
  return level;
}

/* ---- CORE2 handlers (domains) ---- */

static void domain_mark_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *a) {
  trace_event(GT_API_nvtxDomainMarkEx, GT_NVTX_MARK, domain_id(domain), 0, 0, MSG_ATTR,
              a);
}

static nvtxRangeId_t domain_range_start_ex(nvtxDomainHandle_t domain,
                                           const nvtxEventAttributes_t *a) {
  nvtxRangeId_t id = new_range_id();
  trace_event(GT_API_nvtxDomainRangeStartEx, GT_NVTX_START, domain_id(domain), id, 0,
              MSG_ATTR, a);
  return id;
}

static void domain_range_end(nvtxDomainHandle_t domain, nvtxRangeId_t id) {
  trace_event(GT_API_nvtxDomainRangeEnd, GT_NVTX_END, domain_id(domain), id, 0, MSG_NONE,
              NULL);
}

static int domain_range_push_ex(nvtxDomainHandle_t domain,
                                const nvtxEventAttributes_t *a) {
  uint32_t d = domain_id(domain);
  int level = push_level(d);
  trace_event(GT_API_nvtxDomainRangePushEx, GT_NVTX_PUSH, d, 0, level, MSG_ATTR, a);
  return level;
}

static int domain_range_pop(nvtxDomainHandle_t domain) {
  uint32_t d = domain_id(domain);
  int level = pop_level(d);
  trace_event(GT_API_nvtxDomainRangePop, GT_NVTX_POP, d, 0, level, MSG_NONE, NULL);
  return level;
}

static nvtxStringHandle_t domain_register_string_a(nvtxDomainHandle_t domain,
                                                   const char *string) {
  (void)domain; /* one table for all domains: a handle only names its text */
  int saved_errno = errno;
  struct nvtx_node *n = intern(&g_strings, GT_NVTX_MAGIC_STR, string);
  errno = saved_errno;
  return n;
}

/* tls_narrow for an untraced call (a registration): the guard taken, or
 * NULL when this thread is inside a hook already (nested: no buffer). */
static char *claim_narrow(void) {
  if (gt_tls_depth != 0)
    return NULL;
  gt_tls_depth = 1;
  return tls_narrow;
}
static void release_narrow(char *buf) {
  if (buf)
    gt_tls_depth = 0;
}

static nvtxStringHandle_t domain_register_string_w(nvtxDomainHandle_t domain,
                                                   const wchar_t *string) {
  char *buf = claim_narrow();
  const char *s = buf ? narrow(string, buf, sizeof tls_narrow) : NULL;
  nvtxStringHandle_t h = domain_register_string_a(domain, s != NULL ? s : "<unicode>");
  release_narrow(buf);
  return h;
}

static nvtxDomainHandle_t domain_create_a(const char *name) {
  int saved_errno = errno;
  struct nvtx_node *n = intern(&g_domains, GT_NVTX_MAGIC_DOM, name);
  if (n != NULL && __atomic_load_n(&n->id, __ATOMIC_ACQUIRE) == 0) {
    uint32_t id = atomic_fetch_add_explicit(&g_next_domain_id, 1, memory_order_relaxed);
    uint32_t none = 0; /* two threads creating the same domain: first id wins */
    __atomic_compare_exchange_n(&n->id, &none, id, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  }
  errno = saved_errno;
  return n;
}

static nvtxDomainHandle_t domain_create_w(const wchar_t *name) {
  char *buf = claim_narrow();
  const char *s = buf ? narrow(name, buf, sizeof tls_narrow) : NULL;
  nvtxDomainHandle_t h = domain_create_a(s != NULL ? s : "<unicode>");
  release_narrow(buf);
  return h;
}

/* ---- injection entry point ---- */

struct slot {
  unsigned index;
  NvtxFunctionPointer fn;
};

/* A row of a callback table (a macro: a constant initializer, whose index
 * is NVTX's name for the callback). */
#define GT_SLOT(module, name, fn)                                                        \
  { NVTX_CBID_##module##_##name, (NvtxFunctionPointer)fn }

static const struct slot core_slots[] = {
    GT_SLOT(CORE, MarkEx, mark_ex),
    GT_SLOT(CORE, MarkA, mark_a),
    GT_SLOT(CORE, MarkW, mark_w),
    GT_SLOT(CORE, RangeStartEx, range_start_ex),
    GT_SLOT(CORE, RangeStartA, range_start_a),
    GT_SLOT(CORE, RangeStartW, range_start_w),
    GT_SLOT(CORE, RangeEnd, range_end),
    GT_SLOT(CORE, RangePushEx, range_push_ex),
    GT_SLOT(CORE, RangePushA, range_push_a),
    GT_SLOT(CORE, RangePushW, range_push_w),
    GT_SLOT(CORE, RangePop, range_pop),
};

static const struct slot core2_slots[] = {
    GT_SLOT(CORE2, DomainMarkEx, domain_mark_ex),
    GT_SLOT(CORE2, DomainRangeStartEx, domain_range_start_ex),
    GT_SLOT(CORE2, DomainRangeEnd, domain_range_end),
    GT_SLOT(CORE2, DomainRangePushEx, domain_range_push_ex),
    GT_SLOT(CORE2, DomainRangePop, domain_range_pop),
    GT_SLOT(CORE2, DomainRegisterStringA, domain_register_string_a),
    GT_SLOT(CORE2, DomainRegisterStringW, domain_register_string_w),
    GT_SLOT(CORE2, DomainCreateA, domain_create_a),
    GT_SLOT(CORE2, DomainCreateW, domain_create_w),
};

/* Write `slots` into the loader's table for `module`; 1 on success. */
static int install(const NvtxExportTableCallbacks *cb, int module,
                   const struct slot *slots, size_t n) {
  NvtxFunctionTable table = NULL;
  unsigned int size = 0;
  if (!cb->GetModuleFunctionTable(module, &table, &size) || table == NULL)
    return 0;
  for (size_t i = 0; i < n; i++)
    if (slots[i].index < size && table[slots[i].index] != NULL)
      *table[slots[i].index] = slots[i].fn;
  return 1;
}

GT_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable) {
  if (getExportTable == NULL)
    return 0;
  const NvtxExportTableCallbacks *cb = getExportTable(NVTX_ETID_CALLBACKS);
  if (cb == NULL || cb->struct_size < sizeof *cb || cb->GetModuleFunctionTable == NULL)
    return 0;
  if (!install(cb, NVTX_CB_MODULE_CORE, core_slots,
               sizeof core_slots / sizeof core_slots[0]))
    return 0;
  (void)install(cb, NVTX_CB_MODULE_CORE2, core2_slots,
                sizeof core2_slots / sizeof core2_slots[0]);
  return 1;
}
