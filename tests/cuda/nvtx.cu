// nvtx.cu — NVTX ranges around work: 5 "request" push/pop ranges with 2
// launches each (nested "decode" range inside each), 1 mark, one
// start/end range, and a push/pop in a named domain.  expect: launch=11 sync=6 nvtx=25
#include <cstdio>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

__global__ void step() {}

int main() {
  for (int r = 0; r < 5; r++) {
    nvtxRangePushA("request");
    step<<<1, 32>>>();
    nvtxRangePushA("decode");
    step<<<1, 32>>>();
    nvtxRangePop();
    cudaDeviceSynchronize();
    nvtxRangePop();
  }
  nvtxMarkA("checkpoint");
  nvtxRangeId_t id = nvtxRangeStartA("warmup");
  cudaDeviceSynchronize();
  nvtxRangeEnd(id);
  nvtxDomainHandle_t dom = nvtxDomainCreateA("server");
  nvtxEventAttributes_t attr = {};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attr.message.ascii = "batch";
  attr.colorType = NVTX_COLOR_ARGB;
  attr.color = 0xff00ff00;
  nvtxDomainRangePushEx(dom, &attr);
  step<<<1, 32>>>();
  nvtxDomainRangePop(dom);
  printf("nvtx: done\n");
  return 0;
}
