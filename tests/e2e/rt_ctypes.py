"""The CUDA runtime reached through ctypes (dlopen RTLD_LOCAL + dlsym on
the handle), as Python servers and cffi plugins do: 20 cudaMalloc of 1 MiB
(in stage(), line 12: ctypes releases the GIL around the call), 10 cudaFree,
one cudaDeviceSynchronize (tests/e2e/test_interception.py)."""
import ctypes

rt = ctypes.CDLL("libcudart.so.13")  # RTLD_LOCAL: invisible to RTLD_NEXT


def stage():
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20)) == 0  # line 12
    return p


ptrs = [stage() for _ in range(20)]
for p in ptrs[:10]:
    assert rt.cudaFree(p) == 0
assert rt.cudaDeviceSynchronize() == 0
print("ctypes: 20 allocations, 10 frees")
