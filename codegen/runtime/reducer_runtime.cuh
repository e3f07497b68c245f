// reducer_runtime.cuh: the device helpers every generated reducer kernel uses.
//
// Kept deliberately small: the generated kernel spells out its own loops, shuffles and
// workspace traffic (they are what the physical plan says); only what C does not say
// with the interpreter's meaning lives here.
#pragma once

#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <math_constants.h>

// float -> float8: round to nearest even, a magnitude past the largest finite value (inf
// included) saturating to it, NaN staying NaN: cvt.rn.satfinite on sm_89 and later, as
// TileLang's fp8_e4_t(x) / fp8_e5_t(x) (cutlass's float_e4m3_t(float)) convert
// (docs/semantics.md §8). float8 -> float is exact.
__device__ __forceinline__ __nv_fp8_e4m3 reducer_to_e4m3(float x) {
  __nv_fp8_e4m3 r;
  r.__x = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
  return r;
}

__device__ __forceinline__ __nv_fp8_e5m2 reducer_to_e5m2(float x) {
  __nv_fp8_e5m2 r;
  r.__x = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
  return r;
}

__device__ __forceinline__ float reducer_fp8_to_float(__nv_fp8_e4m3 x) {
  return static_cast<float>(x);
}

__device__ __forceinline__ float reducer_fp8_to_float(__nv_fp8_e5m2 x) {
  return static_cast<float>(x);
}

// max/min where a NaN operand makes the result NaN: TileLang's MaxOpNan/MinOpNan
// (__hmax_nan/__hmin_nan) for `nan_propagate=True` into float16/bfloat16, combined in float
// as every half-precision combine is (spec.ops.NAN_PROPAGATING); zeros as fmaxf/fminf.
__device__ __forceinline__ float reducer_max_nan(float a, float b) {
  return (isnan(a) || isnan(b)) ? __int_as_float(0x7fffffff) : fmaxf(a, b);
}
__device__ __forceinline__ float reducer_min_nan(float a, float b) {
  return (isnan(a) || isnan(b)) ? __int_as_float(0x7fffffff) : fminf(a, b);
}

// Named barrier `bar.sync id, count`: completes when `count` threads have arrived; count
// is a multiple of 32, each arriving warp counting 32 whatever its active lanes
// (spec.physical.warp_arrivals). Barrier 0 is __syncthreads(); plans use 1..15. The memory clobber keeps
// the compiler from moving shared-memory accesses across it.
__device__ __forceinline__ void reducer_barrier(int id, int count) {
  asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(count) : "memory");
}

// Floor division and modulo of integers (TileLang's floordiv/floormod, Python's // and
// %). C's / and % truncate toward zero; the two agree when the signs agree.
template <typename T>
__device__ __forceinline__ T reducer_floordiv(T a, T b) {
  T q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? T(q - 1) : q;
}

template <typename T>
__device__ __forceinline__ T reducer_floormod(T a, T b) {
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
}

// A register array at a slot known only at run time (it depends on the thread, a serial
// loop variable or data). Indexing the array directly moves it to local memory, and there
// CUDA 13.0's ptxas (sm_90, any -O level) miscompiles a 16-bit store it splits into two
// byte stores: the low byte is the value converted to an integer, not its bits
// (docs/compiler-bugs/ptxas-13.0-local-u8-store.md). Selecting over the unrolled slots keeps
// the array in registers; where the slot is a constant after unrolling, the select folds away.
template <typename T, int N>
__device__ __forceinline__ T reducer_get(const T (&a)[N], int i) {
  T v = a[0];
  #pragma unroll
  for (int s = 1; s < N; ++s) {
    if (s == i) v = a[s];
  }
  return v;
}

template <typename T, int N>
__device__ __forceinline__ void reducer_set(T (&a)[N], int i, T v) {
  #pragma unroll
  for (int s = 0; s < N; ++s) {
    if (s == i) a[s] = v;
  }
}

// T.gemm on tensor cores (sm_80 and later): one mma.sync.m16n8k16.row.col of a warp. a
// holds the lane's A fragment (a0..a7, two 16-bit elements per register, the lower one
// first), b its B fragment (b0..b3), d its four C/D elements, updated in place
// (codegen.lower.gemm.mma_*_position are the maps; docs/design.md §24).
__device__ __forceinline__ unsigned reducer_pack16(half lo, half hi) {
  return static_cast<unsigned>(__half_as_ushort(lo)) |
         (static_cast<unsigned>(__half_as_ushort(hi)) << 16);
}

__device__ __forceinline__ unsigned reducer_pack16(__nv_bfloat16 lo, __nv_bfloat16 hi) {
  return static_cast<unsigned>(__bfloat16_as_ushort(lo)) |
         (static_cast<unsigned>(__bfloat16_as_ushort(hi)) << 16);
}

// One mma.sync of the warp on four 32-bit accumulator registers of type T (asm
// constraint C: "f" float, "r" int), d += a·b; INSTR names the shape and types.
#define REDUCER_MMA(NAME, T, C, INSTR)                                                 \
  __device__ __forceinline__ void NAME(T& d0, T& d1, T& d2, T& d3,                    \
                                       const unsigned (&a)[4], const unsigned (&b)[2]) { \
    asm volatile("mma.sync.aligned." INSTR " "                                         \
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"               \
                 : "+" C(d0), "+" C(d1), "+" C(d2), "+" C(d3)                          \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));  \
  }

REDUCER_MMA(reducer_mma_f32_f16, float, "f", "m16n8k16.row.col.f32.f16.f16.f32")
REDUCER_MMA(reducer_mma_f32_bf16, float, "f", "m16n8k16.row.col.f32.bf16.bf16.f32")

// 8-bit operands (m16n8k32): four elements to a register, the first in the low byte
__device__ __forceinline__ unsigned reducer_pack8(signed char a, signed char b, signed char c,
                                                  signed char d) {
  return static_cast<unsigned>(static_cast<unsigned char>(a)) |
         (static_cast<unsigned>(static_cast<unsigned char>(b)) << 8) |
         (static_cast<unsigned>(static_cast<unsigned char>(c)) << 16) |
         (static_cast<unsigned>(static_cast<unsigned char>(d)) << 24);
}

template <typename F8>
__device__ __forceinline__ unsigned reducer_pack8(F8 a, F8 b, F8 c, F8 d) {
  return static_cast<unsigned>(a.__x) | (static_cast<unsigned>(b.__x) << 8) |
         (static_cast<unsigned>(c.__x) << 16) | (static_cast<unsigned>(d.__x) << 24);
}

REDUCER_MMA(reducer_mma_s32_s8, int, "r", "m16n8k32.row.col.s32.s8.s8.s32")

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
// float8 operands: sm_89 and later (spec.target's fp8_mma)
REDUCER_MMA(reducer_mma_f32_e4m3, float, "f", "m16n8k32.row.col.f32.e4m3.e4m3.f32")
REDUCER_MMA(reducer_mma_f32_e5m2, float, "f", "m16n8k32.row.col.f32.e5m2.e5m2.f32")
#endif

// ldmatrix (sm_75 and later): lane 8j + r supplies the address of row r (16 bytes) of
// matrix j; register j of lane l receives row l/4's elements 2(l%4), 2(l%4)+1 of matrix
// j, or with .trans column l/4's elements in rows 2(l%4), 2(l%4)+1
// (codegen.lower.ldmatrix.distribute).
#define REDUCER_LDMATRIX_X4(NAME, QUALIFIERS)                                          \
  __device__ __forceinline__ void NAME(unsigned (&r)[4], const void* row) {           \
    const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(row));            \
    asm volatile("ldmatrix.sync.aligned.m8n8.x4" QUALIFIERS ".shared.b16 "             \
                 "{%0,%1,%2,%3}, [%4];"                                                 \
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));            \
  }
#define REDUCER_LDMATRIX_X2(NAME, QUALIFIERS)                                          \
  __device__ __forceinline__ void NAME(unsigned (&r)[2], const void* row) {           \
    const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(row));            \
    asm volatile("ldmatrix.sync.aligned.m8n8.x2" QUALIFIERS ".shared.b16 {%0,%1}, [%2];" \
                 : "=r"(r[0]), "=r"(r[1]) : "r"(a));                                    \
  }
REDUCER_LDMATRIX_X4(reducer_ldmatrix_x4, "")
REDUCER_LDMATRIX_X4(reducer_ldmatrix_x4_trans, ".trans")
REDUCER_LDMATRIX_X2(reducer_ldmatrix_x2, "")
REDUCER_LDMATRIX_X2(reducer_ldmatrix_x2_trans, ".trans")

// float16 C: d0, d1 travel packed in one register and d2, d3 in another
__device__ __forceinline__ void reducer_mma_f16_f16(half& d0, half& d1, half& d2, half& d3,
                                                    const unsigned (&a)[4],
                                                    const unsigned (&b)[2]) {
  unsigned c01 = reducer_pack16(d0, d1), c23 = reducer_pack16(d2, d3);
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 "
               "{%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"
               : "+r"(c01), "+r"(c23)
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  d0 = __ushort_as_half(static_cast<unsigned short>(c01 & 0xffffu));
  d1 = __ushort_as_half(static_cast<unsigned short>(c01 >> 16));
  d2 = __ushort_as_half(static_cast<unsigned short>(c23 & 0xffffu));
  d3 = __ushort_as_half(static_cast<unsigned short>(c23 >> 16));
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
// A pipelined T.Pipelined loop (sm_80 and later): 16 bytes copied global -> shared
// asynchronously; the copies a thread issued since its last commit form one group, and
// the wait returns when at most N of its groups are still in flight. L2-only (.cg): the
// tile is read once.
__device__ __forceinline__ void reducer_cp_async16(void* shared, const void* global) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(address), "l"(global)
               : "memory");
}

__device__ __forceinline__ void reducer_cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}

template <int N>
__device__ __forceinline__ void reducer_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
}
#endif

// ---- Hopper's warpgroup MMA (sm_90a; codegen.lower.wgmma, docs/design.md §24.4) ----
// A swizzled shared operand's element offset: the chunked offset e with bits
// [left, left+b) XOR bits [right, right+b) (mask = 2^b - 1), the 128B/64B/32B swizzle of
// the descriptor's mode in element units.
__device__ __forceinline__ int reducer_swizzle(int e, int right, int mask, int left) {
  return e ^ (((e >> right) & mask) << left);
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// The matrix descriptor of a wgmma operand: the tile's first element (before the
// swizzle, which the hardware applies), LBO and SBO already >> 4, the swizzle mode
// (1 = 128B, 2 = 64B, 3 = 32B); base offset 0 (the stages start on the swizzle's period).
__device__ __forceinline__ unsigned long long reducer_wgmma_desc(const void* tile, int lbo,
                                                                 int sbo, int mode) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(tile));
  return static_cast<unsigned long long>((a & 0x3FFFF) >> 4) |
         (static_cast<unsigned long long>(lbo & 0x3FFF) << 16) |
         (static_cast<unsigned long long>(sbo & 0x3FFF) << 32) |
         (static_cast<unsigned long long>(mode) << 62);
}
// wgmma.fence: the accumulator registers written before are ready for the wgmmas after
__device__ __forceinline__ void reducer_wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void reducer_wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// every committed wgmma of this warpgroup has completed (its reads and its registers)
__device__ __forceinline__ void reducer_wgmma_wait_all() {
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}
// keeps the compiler from moving an accumulator register's accesses across a wgmma
__device__ __forceinline__ void reducer_wgmma_operand(float& r) {
  asm volatile("" : "+f"(r)::"memory");
}
// ... and an A register of the register form live until the wait (never reused before)
__device__ __forceinline__ void reducer_wgmma_operand(unsigned& r) {
  asm volatile("" : "+r"(r)::"memory");
}
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// this thread's shared-memory writes become visible to the async proxy (wgmma's reads)
__device__ __forceinline__ void reducer_fence_async_proxy() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
#else
__device__ __forceinline__ void reducer_fence_async_proxy() {}
#endif
