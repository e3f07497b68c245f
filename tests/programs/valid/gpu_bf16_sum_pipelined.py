# expect: ok
# input: a0=[[-3.0,1.0,2.0,-1.0,-2.0,0.0,4.0,0.0,4.0,1.0,-4.0,-4.0,3.0,4.0,1.0,2.0],[-1.0,4.0,2.0,0.0,-3.0,2.0,-3.0,3.0,-1.0,3.0,-1.0,0.0,-1.0,3.0,2.0,-1.0],[1.0,3.0,-4.0,2.0,2.0,-3.0,3.0,-1.0,-2.0,3.0,0.0,2.0,2.0,1.0,-2.0,0.0],[1.0,1.0,-3.0,-2.0,4.0,4.0,0.0,-2.0,-1.0,-4.0,-4.0,3.0,3.0,3.0,-2.0,-1.0]]
# expect: result o0=[8.0,8.0,7.0,0.0]
#
# GPU regression (fuzz campaign of 2026-12-01, seed 2027 case 203): with the vectorized
# loop partition (branch vec-partition, reverted) the H200 computed a result the
# simulator did not (cuda/auto: o0[0] = -3.375, expected 8.0 (bound 2.43137)).
# With 16-bit reducers read through thread-dependent register slots; kept so the GPU
# differential suite runs it under every plan.
import tilelang.language as T


@T.prim_func
def main(
    a0: T.Tensor((4, 16), T.bfloat16),
    o0: T.Tensor((4,), T.bfloat16),
):
    with T.Kernel(1, threads=32) as bx:
        a0_shared = T.alloc_shared((4, 16), T.bfloat16)
        a0_frag = T.alloc_fragment((4, 16), T.bfloat16)
        acc0 = T.alloc_reducer((4,), T.bfloat16, op="sum", replication="all")
        res0 = T.alloc_fragment((4,), T.bfloat16)
        T.clear(acc0)
        for ko in T.Pipelined(1, num_stages=2):
            T.copy(a0[bx * 4, ko * 16], a0_shared)
            T.copy(a0_shared, a0_frag)
            for k in T.Parallel(64):
                acc0[k % 4] += a0_frag[k % 4, k // 4]
        T.finalize_reducer(acc0, res0)
        T.copy(res0, o0[bx * 4])
