"""A Python program whose kernels are launched by a native extension
(tests/cuda/plugin.cu's plugin_run, through ctypes: the GIL is released
during the call): decode_step launches 25 kernels from line 13 (keep the
lines), prefill launches 10 from line 17 (tests/e2e/test_pprof.py)."""
import ctypes
import sys

plugin = ctypes.CDLL(sys.argv[1])


def decode_step():
    for _ in range(5):
        assert plugin.plugin_run(5) == 0  # line 13


def prefill():
    assert plugin.plugin_run(10) == 0  # line 17


prefill()
decode_step()
print("py_launch: 35 launches")
