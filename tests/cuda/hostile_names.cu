// hostile_names.cu — text a traced process controls, built to break outputs:
// NVTX messages (free text) and one kernel name registered by hand (as
// generated host code does) holding a newline, ESC sequences, a C1 CSI,
// DEL, quotes, a backslash, an overlong NUL (C0 80), a surrogate (ED A0 80),
// a code point past U+10FFFF (F4 90 80 80) and a lone continuation byte.
// Every output must stay strict UTF-8 JSON, and text one line per record
// with no raw control byte (tests/e2e/test_hostile_names.py).
// usage: hostile_names  expect: launch=1 nvtx=4
#include <cstdio>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define HOSTILE                                                                        \
  "a\nFORGED 0.0 pid=1\r\t\x1b[31mred\x1b]0;title\x07\xc2\x9b" "2J\x7f\"q\\b"          \
  "\xc0\x80|\xed\xa0\x80|\xf4\x90\x80\x80|\x80|\xe2\x82\xac"

extern "C" void **__cudaRegisterFatBinary(void *fatCubin);
extern "C" void __cudaRegisterFunction(void **module, const char *hostFun, char *deviceFun,
                                       const char *deviceName, int threadLimit, uint3 *tid,
                                       uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);

static void hostile_stub() {}

int main() {
  static char image[64];
  static char name[] = "_Z7hostile" HOSTILE;
  void **module = __cudaRegisterFatBinary(image);
  __cudaRegisterFunction(module, (const char *)hostile_stub, name, name, -1, 0, 0, 0, 0, 0);
  nvtxRangePushA("msg " HOSTILE);
  cudaError_t e = cudaLaunchKernel((const void *)hostile_stub, dim3(1), dim3(1), 0, 0, 0);
  nvtxMarkA(HOSTILE);
  nvtxRangePop();
  nvtxRangeId_t id = nvtxRangeStartA("\x1b[2J" HOSTILE);
  cudaDeviceSynchronize();
  nvtxRangeEnd(id);
  printf("hostile_names: launch %d\n", (int)e);
  return e == cudaSuccess ? 0 : 1;
}
