# expect: ok
# input: a0=[[-6.0,6.0]]
# expect: result o0=[[-6.0,6.0]]
#
# GPU fuzz finding (campaign of 2026-12-01, seed 2026 case 204): the fast plan kept this
# in-place reducer in part of the threads, so the renderer could not copy it whole
# afterwards ("copy of reducer acc0 over a region its storage layout does not cover").
import tilelang.language as T


@T.prim_func
def main(
    a0: T.Tensor((1, 2), T.float32),
    o0: T.Tensor((1, 2), T.float32),
):
    with T.Kernel(1, threads=32) as bx:
        a0_frag = T.alloc_fragment((1, 2), T.float32)
        acc0 = T.alloc_reducer((2,), T.float32, op="sum", replication="all")
        T.copy(a0[bx, 0], a0_frag)
        for it in T.serial(1):
            T.clear(acc0)
            for i, k in T.Parallel(2, 1):
                acc0[i] += a0_frag[it, i + k]
            T.finalize_reducer(acc0)
            T.copy(acc0, o0[bx + it, 0:2])
