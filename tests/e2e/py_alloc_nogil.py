"""A Python program allocating through the CUDA runtime with the GIL
released: ctypes.CDLL functions drop the GIL around the foreign call, so the
shim sees a thread that does not hold it. load_weights leaks one 1 MiB block
from line 21 on the main thread; stage_batch leaks one 4 KiB block per call
from line 26 on a worker thread; scratch frees what it allocates (keep the
lines). The runtime is loaded RTLD_GLOBAL and its functions looked up in the
global namespace (dlopen(NULL)), where the preloaded shim's cudaMalloc comes
first; with a libcudart handle they would be the same hooks."""
import ctypes
import sys
import threading

ctypes.CDLL("libcudart.so.13", mode=ctypes.RTLD_GLOBAL)
cudart = ctypes.CDLL(None)
cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
cudart.cudaFree.argtypes = [ctypes.c_void_p]


def load_weights(size):
    ptr = ctypes.c_void_p()
    return cudart.cudaMalloc(ctypes.byref(ptr), size)


def stage_batch(size):
    ptr = ctypes.c_void_p()
    return cudart.cudaMalloc(ctypes.byref(ptr),
                             size)


def scratch():
    ptr = ctypes.c_void_p()
    rc = cudart.cudaMalloc(ctypes.byref(ptr), 512)
    return rc or cudart.cudaFree(ptr)


def worker(batches, results):
    for _ in range(batches):
        results.append(stage_batch(4096))


def main(batches):
    results = [load_weights(1 << 20), scratch()]
    t = threading.Thread(target=worker, args=(batches, results), name="stager")
    t.start()
    t.join()
    return sum(results)


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 3))
