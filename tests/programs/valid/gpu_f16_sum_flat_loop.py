# expect: ok
# input: a0=[[0.0,4.0,4.0,-1.0,1.0,7.0,8.0,-1.0,-3.0,-8.0,-2.0,3.0,-7.0,6.0,-5.0,5.0],[-6.0,-5.0,0.0,-8.0,6.0,0.0,-1.0,0.0,7.0,-2.0,7.0,-4.0,1.0,1.0,6.0,5.0],[2.0,3.0,-6.0,-5.0,-3.0,4.0,7.0,8.0,-1.0,3.0,-8.0,-6.0,4.0,6.0,-5.0,-2.0],[4.0,7.0,5.0,4.0,6.0,-8.0,-5.0,-3.0,-6.0,3.0,-6.0,4.0,1.0,4.0,3.0,-6.0],[7.0,4.0,7.0,-1.0,4.0,4.0,3.0,2.0,8.0,8.0,3.0,-4.0,3.0,-2.0,3.0,-3.0],[8.0,-6.0,-2.0,3.0,3.0,-1.0,-3.0,-2.0,8.0,3.0,-5.0,3.0,8.0,-6.0,0.0,-4.0],[-7.0,-5.0,6.0,-4.0,1.0,1.0,-3.0,2.0,-1.0,-3.0,3.0,-7.0,-2.0,1.0,4.0,5.0],[-8.0,6.0,-7.0,4.0,8.0,-6.0,-3.0,1.0,6.0,-5.0,8.0,3.0,5.0,-6.0,7.0,-8.0],[-1.0,2.0,0.0,-7.0,0.0,-3.0,5.0,-4.0,-1.0,-3.0,6.0,5.0,-8.0,-6.0,2.0,6.0],[-2.0,0.0,-5.0,1.0,2.0,6.0,0.0,2.0,-7.0,-7.0,-7.0,5.0,-6.0,3.0,5.0,-8.0],[-2.0,-1.0,-1.0,2.0,-5.0,-6.0,5.0,-1.0,-7.0,4.0,7.0,-4.0,3.0,-2.0,-6.0,2.0],[-3.0,-4.0,8.0,-7.0,8.0,3.0,6.0,3.0,-2.0,7.0,-3.0,7.0,8.0,-3.0,1.0,3.0]]
# expect: result o0=[11.0,7.0,1.0,7.0,46.0,7.0,-9.0,5.0,-7.0,-18.0,-12.0,32.0]
#
# GPU regression (fuzz campaign of 2026-12-01, seed 2027 case 859): with the vectorized
# loop partition (branch vec-partition, reverted) the H200 computed a result the
# simulator did not (cuda/auto: o0[0] = 12.125, expected 11.0 (bound 0.517185)).
# With 16-bit reducers read through thread-dependent register slots; kept so the GPU
# differential suite runs it under every plan.
import tilelang.language as T


@T.prim_func
def main(
    a0: T.Tensor((12, 16), T.float16),
    o0: T.Tensor((12,), T.float16),
):
    with T.Kernel(1, threads=96) as bx:
        a0_frag = T.alloc_fragment((12, 16), T.float16)
        acc0 = T.alloc_reducer((12,), T.float16, op="sum")
        res0 = T.alloc_fragment((12,), T.float16)
        T.reducer_init(acc0)
        T.copy(a0[bx * 12, 0], a0_frag)
        for k in T.Parallel(192):
            T.reducer_update(acc0[k % 12], a0_frag[k % 12, k // 12])
        T.finalize_reducer(acc0, res0)
        T.copy(res0, o0[bx * 12])
