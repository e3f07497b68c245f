# expect: ok
# input: a0=[[-3.0,6.0,4.0,-8.0,-3.0,2.0,-5.0,-8.0,-8.0,5.0,0.0,-1.0,-8.0,-8.0,-6.0,1.0,-7.0,-6.0,1.0,7.0,-6.0,-5.0,-6.0,7.0],[-3.0,-5.0,-7.0,-4.0,-2.0,2.0,-7.0,3.0,8.0,-3.0,-5.0,7.0,-1.0,4.0,-8.0,-3.0,1.0,-6.0,7.0,1.0,2.0,2.0,1.0,2.0],[-1.0,5.0,-2.0,-6.0,5.0,-7.0,-7.0,3.0,3.0,7.0,7.0,5.0,-2.0,-5.0,2.0,6.0,-1.0,-5.0,-2.0,5.0,-2.0,8.0,-8.0,6.0]]
# expect: result o0=[[-19.0,-36.0],[-16.0,2.0],[12.0,2.0]]
#
# Fixed fuzz finding (issue #12, regression test): this was a false R300 (layout conflict)
# on a valid program with several update loops per epoch, reading a0_frag[it, 12*i + k]
# over k < 5 (then k + 5 over k < 7): 12 is no multiple of 5 or 7, so no loop could place
# a0_frag, and the copy's default partition moves each column's holders with the row `it`.
# Now the first loop places a0_frag through the inverse of its gapped index and the second
# follows it. GPU fuzz campaign of 2026-12-01, seed 2027 case 669; TileLang 0.1.15 runs it
# correctly.
import tilelang.language as T


@T.prim_func
def main(
    a0: T.Tensor((3, 24), T.float32),
    o0: T.Tensor((3, 2), T.float32),
):
    with T.Kernel(1, threads=32) as bx:
        a0_frag = T.alloc_fragment((3, 24), T.float32)
        acc0 = T.alloc_reducer((2,), T.float32, op="sum")
        res0 = T.alloc_fragment((2,), T.float32)
        T.copy(a0[bx * 3, 0], a0_frag)
        for it in T.serial(3):
            T.reducer_init(acc0)
            for i, k in T.Parallel(2, 5):
                T.reducer_update(acc0[i], a0_frag[it, (i * 12) + k])
            for i, k in T.Parallel(2, 7):
                T.reducer_update(acc0[i], a0_frag[it, (i * 12) + (k + 5)])
            T.finalize_reducer(acc0, res0)
            T.copy(res0, o0[(bx * 3) + it, 0:2])
