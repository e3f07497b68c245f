# expect: ok
# input: a0=[[-7.0,-7.0,0.0,4.0,4.0,6.0,6.0,1.0,4.0,2.0,0.0,-1.0,3.0,8.0,2.0,4.0,3.0,-6.0,4.0,7.0,-7.0,6.0,4.0,6.0,3.0,8.0,-7.0,4.0,-3.0,-7.0,1.0,-5.0,-2.0,-3.0,0.0,-8.0,1.0,0.0,0.0,3.0,5.0,8.0,6.0,-1.0,0.0,-5.0,-4.0,-6.0],[2.0,5.0,-5.0,-2.0,2.0,-8.0,-1.0,-2.0,-8.0,6.0,0.0,4.0,-7.0,-6.0,-2.0,2.0,3.0,-5.0,-4.0,-1.0,7.0,-6.0,4.0,4.0,5.0,3.0,0.0,-8.0,-5.0,2.0,-4.0,-7.0,0.0,-2.0,-4.0,0.0,-4.0,4.0,-7.0,-7.0,1.0,-4.0,4.0,-2.0,-2.0,-7.0,0.0,-6.0]]
# expect: result o0=[[8.0,8.0],[7.0,5.0]]
#
# Fixed fuzz finding (issue #12, regression test): this was a false R300 (layout conflict)
# on a valid program with several update loops per epoch, reading a0_frag[it, 24*i + k]
# over k < 11 (then k + 11 over k < 13): 24 is no multiple of 11 or 13, so no loop could
# place a0_frag, and the copy's default partition moves each column's holders with the row
# `it`. Now the first loop places a0_frag through the inverse of its gapped index and the
# second follows it. GPU fuzz campaign of 2026-12-01, seed 2027 case 845; TileLang 0.1.15
# runs it correctly.
import tilelang.language as T


@T.prim_func
def main(
    a0: T.Tensor((2, 48), T.float32),
    o0: T.Tensor((2, 2), T.float32),
):
    with T.Kernel(1, threads=32) as bx:
        a0_frag = T.alloc_fragment((2, 48), T.float32)
        acc0 = T.alloc_reducer((2,), T.float32, op="max")
        res0 = T.alloc_fragment((2,), T.float32)
        T.copy(a0[bx * 2, 0], a0_frag)
        for it in T.serial(2):
            T.reducer_init(acc0)
            for i, k in T.Parallel(2, 11):
                T.reducer_update(acc0[i], a0_frag[it, (i * 24) + k])
            for i, k in T.Parallel(2, 13):
                T.reducer_update(acc0[i], a0_frag[it, (i * 24) + (k + 11)])
            T.finalize_reducer(acc0, res0)
            T.copy(res0, o0[(bx * 2) + it, 0:2])
