# expect: ok
#
# TileLang's gemm_sr and gemm_rr: B read from a fragment. The mma's B layout puts each
# 8-column tile of B on the lanes of the warp that computes those columns of C, k over
# the quad, so each lane takes its B element from a lane of its own warp by a warp
# shuffle (codegen/lower/gemm.py, operand_layout_b); the warps that split M each hold a
# copy (replicated). The first gemm reads A from shared memory and B from a fragment
# (Square: 2×2 warps); the second reads both from fragments (FullRow: 4×1 warps).
import tilelang.language as T


@T.prim_func
def main(a: T.Tensor((64, 32), T.float16), b: T.Tensor((32, 64), T.float16),
         c: T.Tensor((64, 64), T.float32), b2: T.Tensor((32, 32), T.float16),
         c2: T.Tensor((64, 32), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        a_s = T.alloc_shared((64, 32), T.float16)
        b_f = T.alloc_fragment((32, 64), T.float16)
        acc = T.alloc_fragment((64, 64), T.float32)
        a_f = T.alloc_fragment((64, 32), T.float16)
        b2_f = T.alloc_fragment((32, 32), T.float16)
        acc2 = T.alloc_fragment((64, 32), T.float32)
        T.copy(a, a_s)
        T.copy(b, b_f)
        T.gemm(a_s, b_f, acc, clear_accum=True)
        T.copy(acc, c)
        T.copy(a, a_f)
        T.copy(b2, b2_f)
        T.gemm(a_f, b2_f, acc2, policy=T.GemmWarpPolicy.FullRow, clear_accum=True)
        T.copy(acc2, c2)
