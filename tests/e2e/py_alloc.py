"""A Python program allocating through the CUDA runtime from Python code:
allocate_batch leaks one buffer per call, from line 16 (keep the lines).
The runtime is loaded RTLD_GLOBAL and called through the global namespace,
the way a C extension's calls bind; PyDLL keeps the GIL held during the
call, as C extensions do."""
import ctypes
import sys

ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
cudart = ctypes.PyDLL(None)
cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]


def allocate_batch(size):
    ptr = ctypes.c_void_p()
    rc = cudart.cudaMalloc(
        ctypes.byref(ptr), size)
    return rc, ptr


def serve(requests):
    kept = [allocate_batch(1 << 16) for _ in range(requests)]
    return sum(rc for rc, _ in kept)


if __name__ == "__main__":
    sys.exit(serve(int(sys.argv[1]) if len(sys.argv) > 1 else 3))
