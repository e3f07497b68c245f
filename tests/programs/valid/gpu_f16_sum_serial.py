# expect: ok
# input: a0=[[-5.0,5.0,-4.0,-4.0,0.0,-8.0,6.0,6.0,8.0,-6.0,4.0,6.0,-1.0,7.0,6.0,4.0,7.0,7.0,-4.0,6.0,-8.0,-5.0,3.0,-6.0,-6.0,4.0,-4.0,2.0,2.0,1.0,7.0,8.0,5.0,1.0,-2.0,6.0,-4.0,-1.0,7.0,2.0,8.0,-3.0,-5.0,-4.0,7.0,8.0,4.0,-5.0,-6.0,-3.0,-2.0,-7.0,4.0,2.0,-8.0,2.0,2.0,-7.0,-7.0,-7.0,0.0,-5.0,-5.0,1.0]]
# expect: result o0=[[24.0,14.0,24.0,-46.0]]
#
# GPU regression (fuzz campaign of 2026-12-01, seed 2027 case 806): with the vectorized
# loop partition (branch vec-partition, reverted) the H200 computed a result the
# simulator did not (cuda/auto: o0[0, 2] = 23.25, expected 24.0 (bound 0.578654)).
# With 16-bit reducers read through thread-dependent register slots; kept so the GPU
# differential suite runs it under every plan.
import tilelang.language as T


@T.prim_func
def main(
    a0: T.Tensor((1, 64), T.float16),
    o0: T.Tensor((1, 4), T.float16),
):
    with T.Kernel(1, threads=32) as bx:
        a0_frag = T.alloc_fragment((1, 64), T.float16)
        acc0 = T.alloc_reducer((4,), T.float16, op="sum")
        res0 = T.alloc_fragment((4,), T.float16)
        T.copy(a0[bx, 0], a0_frag)
        for it in T.serial(1):
            T.reducer_init(acc0)
            for k in T.Parallel(64):
                T.reducer_update(acc0[k % 4], a0_frag[it, ((k % 4) * 16) + (k // 4)])
            T.finalize_reducer(acc0, res0)
            T.copy(res0, o0[bx + it, 0:4])
