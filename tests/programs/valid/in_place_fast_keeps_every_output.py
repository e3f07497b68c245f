# expect: ok
# input: a0=[[1,-1,-1,1,1,-1,1,1,-1,1,1,-1,1,-1,-1,1,-1,1,-1,1,1,-1,-1]]
# expect: result o0=[-1]
#
# GPU fuzz finding (campaign of 2026-12-01, seed 2026 case 791): the fast plan kept this
# in-place product in 32 of the 96 threads and published the result only there; the
# reducer is then read by every thread, so threads 32..95 read an output they do not
# hold (R300 in the simulator). An in-place finalize keeps its destination obligation:
# every participant keeps every output.
import tilelang.language as T


@T.prim_func
def main(
    a0: T.Tensor((1, 23), T.int32),
    o0: T.Tensor((1,), T.int32),
):
    with T.Kernel(1, threads=96) as bx:
        acc0 = T.alloc_reducer((1,), T.int32, op="product", replication="all")
        T.fill(acc0, 1)
        for k in T.Parallel(64):
            if k < 23:
                acc0[0] *= a0[bx, k]
        T.finalize_reducer(acc0)
        for i in T.Parallel(1):
            o0[bx + i] = acc0[i]
