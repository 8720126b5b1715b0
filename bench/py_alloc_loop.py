"""py_alloc_loop.py — stack-capture cost from Python: N cudaMalloc/cudaFree
pairs (argv[1], default 20,000) called through ctypes from a Python call
chain argv[2] frames deep (default 20), with the GIL released (argv[3]
"released": ctypes.CDLL) or held ("held": ctypes.PyDLL). The runtime is
loaded RTLD_GLOBAL and called through the global namespace, where the
preloaded shim's hooks come first. Prints "ns_per_call X" (one malloc or
one free)."""
import ctypes
import sys
import time

ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)


def loop(rt, n):
    p = ctypes.c_void_p()
    ref = ctypes.byref(p)
    malloc, free = rt.cudaMalloc, rt.cudaFree
    t0 = time.perf_counter_ns()
    for _ in range(n):
        malloc(ref, 256)
        free(p)
    return (time.perf_counter_ns() - t0) / (2.0 * n)


def deep(depth, rt, n):
    return deep(depth - 1, rt, n) if depth > 1 else loop(rt, n)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    rt = (ctypes.PyDLL if len(sys.argv) > 3 and sys.argv[3] == "held" else ctypes.CDLL)(None)
    rt.cudaMalloc.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    rt.cudaFree.argtypes = [ctypes.c_void_p]
    deep(depth, rt, 1000)  # warm-up
    print("ns_per_call %.1f" % deep(depth, rt, n))
