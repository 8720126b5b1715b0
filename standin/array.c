/* array.c — CUDA arrays, mipmapped arrays and texture objects.
 *
 * Contract:
 *  - An array is a handle object (never returned to malloc, pool.c) whose
 *    storage is device memory in memory.c's table (SI_MEM_ARRAY): element
 *    size x width x height x depth bytes, zeroed, counted against the
 *    capacity, rows of width elements stored densely (no padding). The
 *    program never sees the storage address, only the handle; copies reach
 *    the storage through si_array_view.
 *  - Validation follows the real runtime: a channel descriptor has 1, 2 or 4
 *    channels of one size (8, 16 or 32 bits), the used ones first, of kind
 *    signed, unsigned or float (float: 16 or 32 bits), else
 *    cudaErrorInvalidChannelDescriptor;
 *    NULL outputs, a zero width, unknown flags, a cubemap that is not
 *    square with a depth of 6 (x layers), a 3D array with layered-only flags
 *    and sizes past the device's texture limits (device.c reports the same)
 *    are cudaErrorInvalidValue.
 *  - A mipmapped array holds one storage block; each level is an array
 *    object (cudaGetMipmappedArrayLevel) of half the size of the one before
 *    (at least 1; a layered or cubemap array keeps its depth) that is freed
 *    with its mipmapped array, never alone. numLevels is 1 to 1 +
 *    floor(log2(largest dimension)).
 *  - cudaFreeArray(NULL) and cudaFreeMipmappedArray(NULL) succeed; a stale
 *    or foreign handle is cudaErrorInvalidValue.
 *  - Texture objects (cudaCreateTextureObject) validate their resource — an
 *    array, a mipmapped array, or linear / pitched device memory — and are
 *    handles from a pool; nothing samples them (kernels do not run).
 */
#include <string.h>

#include "standin.h"

#define SI_MAGIC_ARRAY 0x41525259u  /* "ARRY" */
#define SI_MAGIC_MIPMAP 0x4d49504du /* "MIPM" */
#define SI_MAGIC_TEXOBJ 0x5445584fu /* "TEXO" */
#define MAX_LEVELS 32

struct si_mipmap;

struct si_array {
  uint32_t magic;
  uint32_t flags;
  void *pool_link; /* pool.c's free-list link lives at offset 8 */
  struct cudaChannelFormatDesc desc;
  struct cudaExtent extent; /* as created: 0 height / depth for fewer dimensions */
  size_t elem;
  char *data;
  struct si_mipmap *parent; /* a mipmap level: freed with its mipmapped array */
};

struct si_mipmap {
  uint32_t magic;
  uint32_t levels;
  void *pool_link;
  char *data;
  struct si_array *level[MAX_LEVELS];
};

struct si_texobj {
  uint32_t magic;
  uint32_t pad;
  void *pool_link;
};

static struct si_pool array_pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
                                    .obj_size = sizeof(struct si_array)};
static struct si_pool mipmap_pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
                                     .obj_size = sizeof(struct si_mipmap)};
static struct si_pool texobj_pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
                                     .obj_size = sizeof(struct si_texobj)};

void si_arrays_reset(void) { /* the storage went with si_mem_reset */
  si_pool_reset(&array_pool);
  si_pool_reset(&mipmap_pool);
  si_pool_reset(&texobj_pool);
}

static void *resolve(const void *h, uint32_t magic) {
  const uint32_t *m = h;
  return m != NULL && __atomic_load_n(m, __ATOMIC_ACQUIRE) == magic ? (void *)m : NULL;
}

static size_t max1(size_t n) {
  return n ? n : 1;
}

int si_array_view(const void *array, struct si_array_view *out) {
  const struct si_array *a = resolve(array, SI_MAGIC_ARRAY);
  if (a == NULL)
    return 0;
  *out = (struct si_array_view){a->data, a->elem, a->extent.width, max1(a->extent.height),
                                max1(a->extent.depth)};
  return 1;
}

/* ---- channel descriptors ------------------------------------------------------- */

SI_API struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w,
                                                          enum cudaChannelFormatKind f) {
  return (struct cudaChannelFormatDesc){x, y, z, w, f};
}

/* Bytes per element, or 0 for a descriptor the runtime refuses. */
static size_t desc_elem(const struct cudaChannelFormatDesc *d) {
  int c[4] = {d->x, d->y, d->z, d->w}, bits = 0, used = 1, n = 0;
  for (int i = 0; i < 4; i++) {
    n += c[i] != 0;
    if (c[i] != 0 && c[i] != 8 && c[i] != 16 && c[i] != 32)
      return 0;
    if (c[i] != 0 && !used)
      return 0; /* a channel after an unused one */
    if (c[i] != 0 && c[i] != c[0])
      return 0; /* channels of one element have one size */
    used = c[i] != 0;
    bits += c[i];
  }
  if (n == 3 || bits == 0 ||
      (d->f != cudaChannelFormatKindSigned && d->f != cudaChannelFormatKindUnsigned &&
       d->f != cudaChannelFormatKindFloat))
    return 0;
  if (d->f == cudaChannelFormatKindFloat && c[0] == 8)
    return 0;
  return (size_t)bits / 8;
}

/* ---- shapes and limits ------------------------------------------------------------ */

#define ARRAY_FLAGS                                                                      \
  (cudaArrayLayered | cudaArraySurfaceLoadStore | cudaArrayCubemap |                     \
   cudaArrayTextureGather)

/* Within the texture limits of the simulated device (device.c). */
static int shape_ok(struct cudaExtent e, unsigned flags) {
  size_t w = e.width, h = e.height, d = e.depth;
  if (w == 0 || (flags & ~(unsigned)ARRAY_FLAGS))
    return 0;
  if (flags & cudaArrayCubemap) {
    size_t layers = d / 6;
    return w == h && d % 6 == 0 && layers >= 1 &&
           (layers == 1 || (flags & cudaArrayLayered)) && w <= SI_TEX_CUBEMAP &&
           layers <= SI_TEX_LAYERS;
  }
  if (flags & cudaArrayLayered) /* depth counts layers */
    return d >= 1 && d <= SI_TEX_LAYERS && w <= SI_TEX_LAYERED && h <= SI_TEX_LAYERED;
  if (d > 0) /* 3D */
    return h > 0 && w <= SI_TEX_3D && h <= SI_TEX_3D && d <= SI_TEX_3D;
  if (h > 0) /* 2D */
    return w <= SI_TEX_2D_W && h <= SI_TEX_2D_H;
  return w <= SI_TEX_1D;
}

static size_t level_dim(size_t n, unsigned level) {
  return n == 0 ? 0 : max1(n >> level);
}

/* The extent of a mipmap level (depth kept for layered and cubemap arrays). */
static struct cudaExtent level_extent(struct cudaExtent e, unsigned level,
                                      unsigned flags) {
  int keep = (flags & (cudaArrayLayered | cudaArrayCubemap)) != 0;
  return (struct cudaExtent){level_dim(e.width, level), level_dim(e.height, level),
                             keep ? e.depth : level_dim(e.depth, level)};
}

static size_t extent_bytes(size_t elem, struct cudaExtent e) {
  return elem * e.width * max1(e.height) * max1(e.depth);
}

/* ---- arrays ---------------------------------------------------------------------- */

static struct si_array *array_new(const struct cudaChannelFormatDesc *desc, size_t elem,
                                  struct cudaExtent e, unsigned flags, char *data,
                                  struct si_mipmap *parent) {
  struct si_array *a = si_pool_get(&array_pool);
  if (a == NULL)
    return NULL;
  a->flags = flags;
  a->desc = *desc;
  a->extent = e;
  a->elem = elem;
  a->data = data;
  a->parent = parent;
  __atomic_store_n(&a->magic, SI_MAGIC_ARRAY, __ATOMIC_RELEASE);
  return a;
}

static cudaError_t malloc_array(cudaArray_t *array,
                                const struct cudaChannelFormatDesc *desc,
                                struct cudaExtent e, unsigned flags) {
  if (array == NULL || desc == NULL)
    return cudaErrorInvalidValue;
  size_t elem = desc_elem(desc);
  if (elem == 0)
    return cudaErrorInvalidChannelDescriptor;
  if (!shape_ok(e, flags))
    return cudaErrorInvalidValue;
  void *data = NULL;
  cudaError_t err = si_mem_array_alloc(&data, extent_bytes(elem, e));
  if (err != cudaSuccess)
    return err;
  struct si_array *a = array_new(desc, elem, e, flags, data, NULL);
  if (a == NULL) {
    si_mem_array_free(data);
    return cudaErrorMemoryAllocation;
  }
  *array = (cudaArray_t)a;
  return cudaSuccess;
}

SI_API cudaError_t cudaMallocArray(cudaArray_t *array,
                                   const struct cudaChannelFormatDesc *desc, size_t width,
                                   size_t height, unsigned int flags) {
  if (flags & (cudaArrayLayered | cudaArrayCubemap))
    return si_ret(cudaErrorInvalidValue); /* cudaMalloc3DArray's */
  return si_ret(malloc_array(array, desc, (struct cudaExtent){width, height, 0}, flags));
}

SI_API cudaError_t cudaMalloc3DArray(cudaArray_t *array,
                                     const struct cudaChannelFormatDesc *desc,
                                     struct cudaExtent extent, unsigned int flags) {
  return si_ret(malloc_array(array, desc, extent, flags));
}

SI_API cudaError_t cudaFreeArray(cudaArray_t array) {
  if (array == NULL)
    return cudaSuccess;
  struct si_array *a = resolve(array, SI_MAGIC_ARRAY);
  if (a == NULL || a->parent != NULL) /* a level goes with its mipmapped array */
    return si_ret(cudaErrorInvalidValue);
  __atomic_store_n(&a->magic, 0, __ATOMIC_RELEASE);
  si_mem_array_free(a->data);
  si_pool_put(&array_pool, a);
  return cudaSuccess;
}

SI_API cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc *desc,
                                    struct cudaExtent *extent, unsigned int *flags,
                                    cudaArray_t array) {
  const struct si_array *a = resolve(array, SI_MAGIC_ARRAY);
  if (a == NULL)
    return si_ret(cudaErrorInvalidValue);
  if (desc)
    *desc = a->desc;
  if (extent)
    *extent = a->extent;
  if (flags)
    *flags = a->flags;
  return cudaSuccess;
}

SI_API cudaError_t cudaGetChannelDesc(struct cudaChannelFormatDesc *desc,
                                      cudaArray_const_t array) {
  const struct si_array *a = resolve(array, SI_MAGIC_ARRAY);
  if (desc == NULL || a == NULL)
    return si_ret(cudaErrorInvalidValue);
  *desc = a->desc;
  return cudaSuccess;
}

/* ---- mipmapped arrays ------------------------------------------------------------- */

static unsigned max_levels(struct cudaExtent e) {
  size_t m = e.width > e.height ? e.width : e.height;
  if (e.depth > m)
    m = e.depth;
  unsigned n = 1;
  while (m >>= 1)
    n++;
  return n;
}

static void mipmap_release(struct si_mipmap *m) {
  for (unsigned l = 0; l < m->levels; l++)
    if (m->level[l] != NULL) {
      __atomic_store_n(&m->level[l]->magic, 0, __ATOMIC_RELEASE);
      si_pool_put(&array_pool, m->level[l]);
    }
  __atomic_store_n(&m->magic, 0, __ATOMIC_RELEASE);
  si_mem_array_free(m->data);
  si_pool_put(&mipmap_pool, m);
}

static cudaError_t malloc_mipmap(cudaMipmappedArray_t *out,
                                 const struct cudaChannelFormatDesc *desc,
                                 struct cudaExtent e, unsigned levels, unsigned flags) {
  if (out == NULL || desc == NULL)
    return cudaErrorInvalidValue;
  size_t elem = desc_elem(desc);
  if (elem == 0)
    return cudaErrorInvalidChannelDescriptor;
  if (!shape_ok(e, flags) || levels == 0 || levels > max_levels(e) || levels > MAX_LEVELS)
    return cudaErrorInvalidValue;
  size_t total = 0;
  for (unsigned l = 0; l < levels; l++)
    total += extent_bytes(elem, level_extent(e, l, flags));
  struct si_mipmap *m = si_pool_get(&mipmap_pool);
  if (m == NULL)
    return cudaErrorMemoryAllocation;
  cudaError_t err = si_mem_array_alloc((void **)&m->data, total);
  if (err != cudaSuccess) {
    si_pool_put(&mipmap_pool, m);
    return err;
  }
  m->levels = levels;
  size_t off = 0;
  for (unsigned l = 0; l < levels; l++) {
    struct cudaExtent le = level_extent(e, l, flags);
    m->level[l] = array_new(desc, elem, le, flags, m->data + off, m);
    off += extent_bytes(elem, le);
    if (m->level[l] == NULL) {
      mipmap_release(m);
      return cudaErrorMemoryAllocation;
    }
  }
  __atomic_store_n(&m->magic, SI_MAGIC_MIPMAP, __ATOMIC_RELEASE);
  *out = (cudaMipmappedArray_t)m;
  return cudaSuccess;
}

SI_API cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *mipmappedArray,
                                            const struct cudaChannelFormatDesc *desc,
                                            struct cudaExtent extent,
                                            unsigned int numLevels, unsigned int flags) {
  return si_ret(malloc_mipmap(mipmappedArray, desc, extent, numLevels, flags));
}

SI_API cudaError_t cudaGetMipmappedArrayLevel(cudaArray_t *levelArray,
                                              cudaMipmappedArray_const_t mipmappedArray,
                                              unsigned int level) {
  const struct si_mipmap *m = resolve(mipmappedArray, SI_MAGIC_MIPMAP);
  if (levelArray == NULL || m == NULL || level >= m->levels)
    return si_ret(cudaErrorInvalidValue);
  *levelArray = (cudaArray_t)m->level[level];
  return cudaSuccess;
}

SI_API cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t mipmappedArray) {
  if (mipmappedArray == NULL)
    return cudaSuccess;
  struct si_mipmap *m = resolve(mipmappedArray, SI_MAGIC_MIPMAP);
  if (m == NULL)
    return si_ret(cudaErrorInvalidValue);
  mipmap_release(m);
  return cudaSuccess;
}

/* ---- texture objects --------------------------------------------------------------- */

static int resource_ok(const struct cudaResourceDesc *r) {
  const void *p;
  switch (r->resType) {
  case cudaResourceTypeArray:
    return resolve(r->res.array.array, SI_MAGIC_ARRAY) != NULL;
  case cudaResourceTypeMipmappedArray:
    return resolve(r->res.mipmap.mipmap, SI_MAGIC_MIPMAP) != NULL;
  case cudaResourceTypeLinear:
    p = r->res.linear.devPtr;
    break;
  case cudaResourceTypePitch2D:
    p = r->res.pitch2D.devPtr;
    break;
  default:
    return 0;
  }
  struct si_range m = si_mem_resolve(&p);
  return m.kind == SI_MEM_DEVICE || m.kind == SI_MEM_MANAGED;
}

SI_API cudaError_t cudaCreateTextureObject(
    cudaTextureObject_t *pTexObject, const struct cudaResourceDesc *pResDesc,
    const struct cudaTextureDesc *pTexDesc,
    const struct cudaResourceViewDesc *pResViewDesc) {
  (void)pTexDesc;
  (void)pResViewDesc;
  if (pTexObject == NULL || pResDesc == NULL || !resource_ok(pResDesc))
    return si_ret(cudaErrorInvalidValue);
  struct si_texobj *t = si_pool_get(&texobj_pool);
  if (t == NULL)
    return si_ret(cudaErrorMemoryAllocation);
  __atomic_store_n(&t->magic, SI_MAGIC_TEXOBJ, __ATOMIC_RELEASE);
  *pTexObject = (cudaTextureObject_t)(uintptr_t)t;
  return cudaSuccess;
}

SI_API cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texObject) {
  struct si_texobj *t = resolve((const void *)(uintptr_t)texObject, SI_MAGIC_TEXOBJ);
  if (t == NULL)
    return si_ret(cudaErrorInvalidValue);
  __atomic_store_n(&t->magic, 0, __ATOMIC_RELEASE);
  si_pool_put(&texobj_pool, t);
  return cudaSuccess;
}
