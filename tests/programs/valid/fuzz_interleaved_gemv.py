# expect: ok
# input: a0=[[4.0,1.0,2.0,4.0,1.0,2.0,3.0,-2.0,-4.0,-2.0,-2.0,3.0,4.0,-4.0,0.0,3.0,-3.0,3.0,-3.0,0.0,3.0,-2.0,-1.0,-2.0],[2.0,-2.0,4.0,0.0,0.0,0.0,1.0,0.0,0.0,4.0,3.0,3.0,2.0,1.0,-1.0,4.0,0.0,-3.0,3.0,-3.0,3.0,1.0,-3.0,-4.0]]
# input: w0=[0.0,-4.0,-3.0,0.0,4.0,0.0,3.0,4.0,3.0,1.0,-1.0,0.0,-2.0,0.0,-1.0,-2.0,4.0,-4.0,-4.0,-3.0,4.0,2.0,3.0,-3.0]
# expect: result o0=[-32.0,15.0]
#
# Fixed fuzz finding (issue #12, regression test): this was a false R300 on a GEMV over one flat T.Parallel
# (a0_frag[k % 2, k // 2] * w0_frag[k // 2]): the loop follows a0_frag (thread =
# (24*(k % 2) + k // 2) % 32), so it needs w0_frag[c] on the threads of a0_frag[:, c], but
# w0_frag keeps the layout its whole-tile T.copy gave it (thread = i, not replicated).
# The copy is free and the replicated layout serves the loop; with the loop written
# T.Parallel(2, 24) the tool finds it. Same mechanism as two_loops_two_fragments.py.
# Seen on the generator before 2-D reducers, fuzz seed 1 cases 183 and 224 (8x24 on 128
# threads, 2x64 on 96), shrunk here by hand in the description. o0 = a0 @ w0.
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
        for k in T.Parallel(48):
            T.reducer_update(acc0[k % 2], a0_frag[k % 2, k // 2] * w0_frag[k // 2])
        T.finalize_reducer(acc0, res0)
        T.copy(res0, o0[bx * 2])
