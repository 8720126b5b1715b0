"""A CUDA runtime loaded by path from a wheel's directory, as PyTorch loads
nvidia/cu13/lib/libcudart.so.13 (RPATH, on no loader path): a memset, which
device timing times, then where libcupti was mapped from, or "not loaded"
(tests/e2e/test_devtime.py)."""
import ctypes
import os
import sys

rt = ctypes.CDLL(sys.argv[1])  # .../nvidia/cu13/lib/libcudart.so.13
p = ctypes.c_void_p()
assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(4096)) == 0
assert rt.cudaMemset(p, 0, ctypes.c_size_t(4096)) == 0
assert rt.cudaDeviceSynchronize() == 0
with open("/proc/self/maps") as f:
    dirs = {os.path.dirname(l.split()[-1]) for l in f if "libcupti" in l}
print("libcupti: %s" % (" ".join(sorted(dirs)) or "not loaded"))
