# expect: ok
# input: a0=[[1.0,-1.0,3.0,6.0,1.0,-6.0,-2.0,-5.0,-5.0,1.0,-2.0,8.0,-6.0,-3.0,0.0,6.0,-5.0,-2.0,-8.0,3.0,-2.0,6.0,1.0,-7.0,-1.0,8.0,5.0,-1.0,-8.0,7.0,-1.0,2.0,-4.0,3.0,5.0,4.0,5.0,-4.0,2.0,5.0,-6.0,2.0,2.0,4.0,-6.0,-2.0,-8.0,-3.0],[2.0,7.0,-1.0,4.0,5.0,4.0,2.0,1.0,-5.0,3.0,-2.0,-6.0,-7.0,0.0,-3.0,8.0,5.0,-4.0,-1.0,3.0,-8.0,6.0,6.0,-3.0,-3.0,7.0,-5.0,8.0,-3.0,1.0,0.0,5.0,-1.0,0.0,-7.0,4.0,4.0,-1.0,1.0,-7.0,5.0,8.0,3.0,3.0,-2.0,-2.0,5.0,7.0],[4.0,5.0,0.0,-4.0,3.0,-4.0,-1.0,1.0,4.0,5.0,3.0,8.0,-5.0,-5.0,3.0,-1.0,-2.0,6.0,-7.0,-1.0,-3.0,3.0,5.0,-5.0,-4.0,-6.0,1.0,0.0,1.0,2.0,2.0,-5.0,-2.0,-5.0,-2.0,1.0,3.0,0.0,-7.0,6.0,0.0,3.0,5.0,0.0,5.0,1.0,0.0,0.0],[-7.0,-1.0,-1.0,4.0,-4.0,-2.0,-5.0,6.0,5.0,2.0,0.0,7.0,5.0,-8.0,-8.0,-1.0,-5.0,1.0,-1.0,-2.0,7.0,1.0,8.0,0.0,-2.0,8.0,-3.0,0.0,6.0,-8.0,-5.0,7.0,-4.0,-6.0,-5.0,-8.0,-1.0,-6.0,-5.0,-6.0,-5.0,1.0,2.0,-5.0,-6.0,-6.0,7.0,-2.0]]
# expect: result o0=[-8.0,-8.0,-7.0,-8.0]
#
# GPU regression (fuzz campaign of 2026-12-01, seed 2027 case 692): with the vectorized
# loop partition (branch vec-partition, reverted) the H200 computed a result the
# simulator did not (cuda/auto: o0[2] = -4.0, expected -7.0 (bound 0)).
# With 16-bit reducers read through thread-dependent register slots; kept so the GPU
# differential suite runs it under every plan.
import tilelang.language as T


@T.prim_func
def main(
    a0: T.Tensor((4, 48), T.bfloat16),
    o0: T.Tensor((4,), T.bfloat16),
):
    with T.Kernel(1, threads=32) as bx:
        acc0 = T.alloc_reducer((4,), T.bfloat16, op="min")
        res0 = T.alloc_fragment((4,), T.bfloat16)
        T.reducer_init(acc0)
        for i, k in T.Parallel(4, 10):
            T.reducer_update(acc0[i], a0[(bx * 4) + i, k])
        for i, k in T.Parallel(4, 32):
            T.reducer_update(acc0[i], a0[(bx * 4) + i, k + 10])
        for i, k in T.Parallel(4, 6):
            T.reducer_update(acc0[i], a0[(bx * 4) + i, k + 42])
        T.finalize_reducer(acc0, res0)
        T.copy(res0, o0[bx * 4])
