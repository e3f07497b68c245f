# expect: error R506 at 12
#
# 2048 threads per block: twice what a block can have on sm_90. The kernel could not
# be launched, so the plan is refused (R506 at the T.Kernel).
import tilelang.language as T

N = 2048


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=N) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        total = T.alloc_reducer((1,), T.float32, op="sum")
        for j in T.Parallel(N):
            T.reducer_update(total, (0,), x_frag[j])
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(total, result)
        T.copy(result, out)
