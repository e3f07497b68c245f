# expect: ok
#
# Atomics CUDA has no instruction for, issued as compare-and-swap loops (codegen/lower/
# atomics.py): float32/float64 and float16/bfloat16 max and min (fmaxf/fminf, fmax/fmin,
# __hmax/__hmin: the interpreter's maximumNumber/minimumNumber, docs/semantics.md §12),
# swapping the element itself; every op on 16-bit integers, swapping the element with
# the 16-bit atomicCAS; every op on 8-bit integers, swapping the aligned 32-bit word that
# holds the element (each 8-bit output fills whole words: 16 elements). Integers are
# exact in any order, sums wrap; max and min are exact. 8 blocks × 4 rows contribute to
# each of the 16 columns; the T.Parallel's 64 iterations on 128 threads replicate 2×:
# only replica 0 issues.
import tilelang.language as T


@T.prim_func
def main(X: T.Tensor((8, 64), T.float32), H: T.Tensor((8, 64), T.float16),
         I8: T.Tensor((8, 64), T.int8), U16: T.Tensor((8, 64), T.uint16),
         Fmax: T.Tensor((16,), T.float32), Fmin: T.Tensor((16,), T.float32),
         Dmax: T.Tensor((16,), T.float64), Hmax: T.Tensor((16,), T.float16),
         Bmin: T.Tensor((16,), T.bfloat16),
         S8: T.Tensor((16,), T.int8), Max8: T.Tensor((16,), T.int8),
         Min8: T.Tensor((16,), T.uint8), S16: T.Tensor((16,), T.int16),
         Max16: T.Tensor((16,), T.uint16), Min16: T.Tensor((16,), T.int16)):
    with T.Kernel(8, threads=128) as bx:
        for i, j in T.Parallel(4, 16):
            T.atomic_max(Fmax[j], X[bx, i * 16 + j])
            T.atomic_min(Fmin[j], X[bx, i * 16 + j], memory_order="acq_rel")
            T.atomic_max(Dmax[j], T.cast(X[bx, i * 16 + j], T.float64))
            T.atomic_max(Hmax[j], H[bx, i * 16 + j])
            T.atomic_min(Bmin[j], X[bx, i * 16 + j])
            T.atomic_add(S8[j], I8[bx, i * 16 + j])
            T.atomic_max(Max8[j], I8[bx, i * 16 + j])
            T.atomic_min(Min8[j], T.cast(I8[bx, i * 16 + j], T.uint8))
            T.atomic_add(S16[j], T.cast(U16[bx, i * 16 + j], T.int16))
            T.atomic_max(Max16[j], U16[bx, i * 16 + j])
            T.atomic_min(Min16[j], T.cast(U16[bx, i * 16 + j], T.int16))
