// templated.cu — kernels named like PyTorch's: two instantiations of one
// long template (at::native::vectorized_elementwise_kernel<4,
// AbsFunctor<T>, Array<char*, 2> >, T float and double) that differ only
// inside their template arguments, and one short kernel (tiny(int)), for
// the shortening of names in report's tables. Launches float 3 times,
// double 2 times, tiny once, then synchronizes. Prints "templated: ok";
// exits 1 if a call failed.
#include <cstdio>
#include <cuda_runtime.h>

namespace at {
namespace detail {
template <typename T, int N> struct Array { T data[N]; };
} // namespace detail
namespace native {
template <typename T> struct AbsFunctor {
  __device__ T operator()(T x) const { return x < 0 ? -x : x; }
};
template <int vec_size, typename func_t, typename array_t>
__global__ void vectorized_elementwise_kernel(int n, func_t f, array_t data) {}
} // namespace native
} // namespace at

__global__ void tiny(int n) {}

template <typename T> static void launch() {
  at::native::AbsFunctor<T> f;
  at::detail::Array<char *, 2> data = {};
  at::native::vectorized_elementwise_kernel<4><<<1, 32>>>(32, f, data);
}

int main() {
  for (int i = 0; i < 3; i++)
    launch<float>();
  for (int i = 0; i < 2; i++)
    launch<double>();
  tiny<<<1, 1>>>(1);
  int bad = cudaGetLastError() != cudaSuccess;
  bad += cudaDeviceSynchronize() != cudaSuccess;
  printf("templated: ok\n");
  return bad ? 1 : 0;
}
