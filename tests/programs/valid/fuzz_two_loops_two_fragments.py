# expect: ok
# input: a0=[[4.0,1.0,2.0,4.0,1.0,2.0,3.0,-2.0,-4.0,-2.0,-2.0,3.0,4.0,-4.0,0.0,3.0,-3.0,3.0,-3.0,0.0,3.0,-2.0,-1.0,-2.0],[2.0,-2.0,4.0,0.0,0.0,0.0,1.0,0.0,0.0,4.0,3.0,3.0,2.0,1.0,-1.0,4.0,0.0,-3.0,3.0,-3.0,3.0,1.0,-3.0,-4.0]]
# input: w0=[0.0,-4.0,-3.0,0.0,4.0,0.0,3.0,4.0,3.0,1.0,-1.0,0.0,-2.0,0.0,-1.0,-2.0,4.0,-4.0,-4.0,-3.0,4.0,2.0,3.0,-3.0]
# expect: result o0=[-32.0,15.0]
#
# Fixed fuzz finding (issue #12, regression test): this was a false R300 when two T.Parallel loops of one epoch read
# two fragments at shifted columns (a0_frag[i, k] * w0_frag[k], then a0_frag[i, k + 8] *
# w0_frag[k + 8]). Both loops follow a0_frag (thread = 24*i + k, and (24*i + k + 8) % 32),
# so both need w0_frag[c] on the threads of a0_frag[:, c]; but w0_frag keeps the layout
# its whole-tile T.copy gave it (thread = i, not replicated). The copy is free and that
# replicated layout serves both loops; with one loop over all 24 columns (no split) the
# tool finds it. Fuzz seed 1 case 264 (gemv, 3x96 on 160 threads, the columns split at
# 41; also seed 1 cases 161 and 253), shrunk further by hand in the description. GEMV:
# o0 = a0 @ w0.
import tilelang.language as T


@T.prim_func
def main(
    a0: T.Tensor((2, 24), T.float32),
    w0: T.Tensor((24,), T.float32),
    o0: T.Tensor((2,), T.float32),
):
    with T.Kernel(1, threads=32) as bx:
        a0_frag = T.alloc_fragment((2, 24), T.float32)
        w0_frag = T.alloc_fragment((24,), T.float32)
        acc0 = T.alloc_reducer((2,), T.float32, op="sum")
        res0 = T.alloc_fragment((2,), T.float32)
        T.reducer_init(acc0)
        T.copy(a0[bx * 2, 0], a0_frag)
        T.copy(w0[0], w0_frag)
        for i, k in T.Parallel(2, 8):
            T.reducer_update(acc0[i], a0_frag[i, k] * w0_frag[k])
        for i, k in T.Parallel(2, 16):
            T.reducer_update(acc0[i], a0_frag[i, k + 8] * w0_frag[k + 8])
        T.finalize_reducer(acc0, res0)
        T.copy(res0, o0[bx * 2])
