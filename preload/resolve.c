/* resolve.c — where each hook's real function comes from, and the table of
 * hooks generated from include/gputrace/apis.h.
 *
 * Contract:
 *  - gt_slot[api] holds the real function a traced hook forwards to, set
 *    once (CAS): by the first lookup that found it for the program (dlsym on
 *    a handle, cuGetProcAddress, cudaGetDriverEntryPoint: hooks_driver.c), or
 *    on the hook's first call by gt_resolve. A hook never calls anything but
 *    what the program would have called.
 *  - gt_resolve(name): dlsym(RTLD_NEXT), else the library that defines the
 *    family's functions when it was loaded RTLD_LOCAL (libcudart.so* for
 *    cuda*, libcuda.so* for cu*), found among the loaded objects. Never
 *    returns one of our hooks. errno is preserved.
 *  - gt_hooks[]: every RT and DRV entry of apis.h with the address of its
 *    exported hook (this file declares them without prototypes: only their
 *    addresses are taken). A table entry without a hook fails to link.
 *  - gt_real_in_library(fn, name): `name` as defined by the library that
 *    contains `fn` (dladdr + dlopen(RTLD_NOLOAD) + dlsym on that handle):
 *    the library's own function even when its exported address resolves
 *    through the global scope to our hook (a libcuda built without
 *    -Bsymbolic and loaded RTLD_LOCAL returns such addresses from its own
 *    cuGetProcAddress).
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "shim.h"

void *gt_slot[GT_API_COUNT];

/* ---- the hooks (addresses only) ---- */

/* An X-macro over apis.h's GT_API_LIST: a table row for each entry of a
 * family that is hooked (RT, DRV; each declared with its type in shim.h). */
#define GT_IF_HOOKED_RT(...) __VA_ARGS__
#define GT_IF_HOOKED_DRV(...) __VA_ARGS__
#define GT_IF_HOOKED_NVTX(...)
#define GT_IF_HOOKED_META(...)

const struct gt_hook gt_hooks[] = {
#define GT_X_HOOK(name, kind, fam, ...)                                                  \
  GT_IF_HOOKED_##fam({GT_API_##name, (void *)name}, )
    GT_API_LIST(GT_X_HOOK)
#undef GT_X_HOOK
};
const size_t gt_nhooks = sizeof gt_hooks / sizeof gt_hooks[0];

const struct gt_hook *gt_hook_named(const char *name) {
  if (name == NULL || name[0] != 'c' || name[1] != 'u')
    return NULL;
  for (size_t i = 0; i < gt_nhooks; i++)
    if (strcmp(gt_apis[gt_hooks[i].api].name, name) == 0)
      return &gt_hooks[i];
  return NULL;
}

int gt_is_hook(const void *p) {
  for (size_t i = 0; i < gt_nhooks; i++)
    if (gt_hooks[i].hook == p)
      return 1;
  return 0;
}

/* ---- resolution ---- */

struct find_lib {
  const char *prefix;
  size_t len;
  char path[512];
};

static int find_lib_cb(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct find_lib *out = data;
  const char *base = strrchr(info->dlpi_name, '/');
  base = base ? base + 1 : info->dlpi_name;
  if (strncmp(base, out->prefix, out->len) != 0)
    return 0;
  snprintf(out->path, sizeof out->path, "%s", info->dlpi_name);
  return 1;
}

/* `name` looked up on the handle of an already loaded library. */
static void *lookup_in(const char *path, const char *name) {
  void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
  if (h == NULL)
    return NULL;
  void *fn = gt_real_dlsym(h, name);
  dlclose(h); /* NOLOAD took a reference; the library stays loaded */
  return fn != NULL && !gt_is_hook(fn) ? fn : NULL;
}

static void *resolve(const char *name) {
  void *fn = gt_real_dlsym(RTLD_NEXT, name);
  if (fn != NULL && !gt_is_hook(fn))
    return fn;
  /* A libcudart loaded with dlopen(RTLD_LOCAL) — PyTorch's extension
   * modules, ctypes.CDLL — or a libcuda loaded so (cuBLAS, Triton) is
   * invisible to RTLD_NEXT: look it up directly. */
  int runtime = strncmp(name, "cuda", 4) == 0 || strncmp(name, "__cuda", 6) == 0;
  struct find_lib found = {
      runtime ? "libcudart.so" : "libcuda.so", runtime ? 12 : 10, {0}};
  if (!dl_iterate_phdr(find_lib_cb, &found))
    return NULL;
  return lookup_in(found.path, name);
}

void *gt_resolve(const char *name) {
  int saved_errno = errno;
  void *fn = resolve(name);
  errno = saved_errno;
  return fn;
}

void *gt_real_in_library(const void *fn, const char *name) {
  Dl_info info;
  if (fn == NULL || !dladdr(fn, &info) || info.dli_fname == NULL)
    return NULL;
  int saved_errno = errno;
  void *real = lookup_in(info.dli_fname, name);
  errno = saved_errno;
  return real;
}

void *gt_slot_set(unsigned api, void *real) {
  void *expected = NULL;
  if (__atomic_compare_exchange_n(&gt_slot[api], &expected, real, 0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE))
    return real;
  return expected;
}

void *gt_real_fn_slow(unsigned api) {
  void *p = gt_resolve(gt_apis[api].name);
  return p != NULL ? gt_slot_set(api, p) : NULL;
}
