// Minimal reproducer: CUDA 13.0's NVVM (cicc) crashes with a segmentation fault on a linear
// select over a register array of 102 or more elements whose index is a quotient, in a loop.
// (docs/compiler-bugs/cicc-13.0-select-chain-crash.md)
//
//     nvcc --cubin -arch sm_90 docs/compiler-bugs/cicc_select_chain_crash.cu   # Segmentation fault
//
// The helpers are the runtime header's reducer_get / reducer_set (codegen/runtime/).
template <typename T, int N>
__device__ __forceinline__ T get(const T (&a)[N], int i) {
  T v = a[0];
  #pragma unroll
  for (int s = 1; s < N; ++s) { if (s == i) v = a[s]; }
  return v;
}
template <typename T, int N>
__device__ __forceinline__ void set(T (&a)[N], int i, T v) {
  #pragma unroll
  for (int s = 0; s < N; ++s) { if (s == i) a[s] = v; }
}
extern "C" __global__ void k(int* out) {
  const int tid = threadIdx.x;
  int acc[128];
  #pragma unroll
  for (int s = 0; s < 128; ++s) acc[s] = 0;
  #pragma unroll 1
  for (int slot = 0; slot < 509; ++slot) {
    const int flat = (32*slot + tid) % 1700 - 30;
    if (flat >= 0) set(acc, flat / 13, get(acc, flat / 13) + 1);
  }
  #pragma unroll
  for (int s = 0; s < 128; ++s) out[128*tid + s] = acc[s];
}
