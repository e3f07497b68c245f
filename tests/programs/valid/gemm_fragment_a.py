# expect: ok
#
# TileLang's gemm_rs, attention's second half: P = softmax-like weights computed into a
# fragment by a first gemm and a T.Parallel, cast to float16 (P_cast), then O = P_cast·V
# with A read from that fragment. The mma's A layout puts P_cast's rows on the lanes that
# hold C's rows, so each lane takes A's elements from its quad by warp shuffles (FullRow:
# 4×1 warps). A second gemm_rs under GemmWarpPolicy.Square (2×2 warps) reads a fragment
# replicated over the two warps that split N.
import tilelang.language as T


@T.prim_func
def main(q: T.Tensor((64, 32), T.float16), k: T.Tensor((64, 32), T.float16),
         v: T.Tensor((64, 32), T.float16), o: T.Tensor((64, 32), T.float32),
         o2: T.Tensor((64, 32), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        q_s = T.alloc_shared((64, 32), T.float16)
        k_s = T.alloc_shared((64, 32), T.float16)
        v_s = T.alloc_shared((64, 32), T.float16)
        s = T.alloc_fragment((64, 64), T.float32)
        p = T.alloc_fragment((64, 64), T.float16)
        acc = T.alloc_fragment((64, 32), T.float32)
        w = T.alloc_fragment((64, 64), T.float16)
        acc2 = T.alloc_fragment((64, 32), T.float32)
        T.copy(q, q_s)
        T.copy(k, k_s)
        T.copy(v, v_s)
        T.gemm(q_s, k_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow,
               clear_accum=True)
        for i, j in T.Parallel(64, 64):
            s[i, j] = T.exp2(s[i, j] * 0.125)
        T.copy(s, p)
        T.gemm(p, v_s, acc, policy=T.GemmWarpPolicy.FullRow, clear_accum=True)
        T.copy(acc, o)
        for i, j in T.Parallel(64, 64):
            w[i, j] = k_s[j, i % 32] * 0.5
        T.gemm(w, v_s, acc2, clear_accum=True)
        T.copy(acc2, o2)
