# expect: ok
# input: a0=[[-4.0,8.0,-7.0,-1.0,3.0,-7.0,1.0,-1.0,-2.0,-2.0,-3.0,2.0,3.0,7.0,4.0,4.0,-3.0,2.0,-2.0,-1.0,5.0,4.0,1.0,-4.0,-8.0,5.0,-5.0,-7.0,8.0,2.0,0.0,2.0,-4.0,3.0,-1.0,7.0,1.0,-4.0,6.0,0.0,4.0,-2.0,6.0,-3.0,-1.0,2.0,-4.0,0.0,8.0,-5.0,2.0,-3.0,6.0,-2.0,-6.0,1.0,-5.0,8.0,6.0,1.0,-8.0,-4.0,8.0,-6.0]]
# input: a1=[[-1.0,7.0,-7.0,6.0,1.0,-5.0,4.0,-2.0,-4.0,4.0,-3.0,-5.0,-4.0,1.0,-2.0,-6.0,7.0,-7.0,-3.0,6.0,6.0,-3.0,-6.0,0.0,7.0,1.0,-2.0,-5.0,6.0,-1.0,6.0,-1.0,-6.0,-4.0,4.0,-3.0,-3.0,-7.0,-8.0,-1.0,1.0,5.0,6.0,6.0,5.0,-5.0,6.0,8.0,-6.0,2.0,3.0,2.0,5.0,1.0,5.0,4.0,-6.0,5.0,1.0,4.0,-8.0,-6.0,-6.0,-3.0]]
# expect: result o0=[[8.0,8.0,7.0,8.0]]
# expect: result o1=[[-15.0,-15.0,-15.0,-16.0]]
#
# Fixed fuzz finding (issue #12, regression test): this was a false R300 (layout conflict)
# on a valid program with several update loops per epoch, reading a1_frag[0, 16*c + k]
# over k < 11 (then k + 11 over k < 5): 16 is no multiple of 11, so the loop could not
# place a1_frag, which kept its copy's default partition; the loops follow res0 (placed by
# the loop that stores o0) and fit no such a1_frag. Now the first consumer loop places
# a1_frag through the inverse of its gapped index and the second follows the fragments.
# GPU fuzz campaign of 2026-12-01, seed 2027 case 706; TileLang 0.1.15 runs it correctly.
import tilelang.language as T


@T.prim_func
def main(
    a0: T.Tensor((1, 64), T.float32),
    a1: T.Tensor((1, 64), T.float32),
    o0: T.Tensor((1, 4), T.float32),
    o1: T.Tensor((1, 4), T.float32),
):
    with T.Kernel(1, threads=32) as bx:
        a0_frag = T.alloc_fragment((1, 64), T.float32)
        acc0 = T.alloc_reducer((1, 4), T.float32, op="max")
        res0 = T.alloc_fragment((1, 4), T.float32)
        T.reducer_init(acc0)
        T.copy(a0[bx, 0], a0_frag)
        for c, k in T.Parallel(4, 11):
            T.reducer_update(acc0[0, c], a0_frag[0, (c * 16) + k])
        for c, k in T.Parallel(4, 5):
            T.reducer_update(acc0[0, c], a0_frag[0, (c * 16) + (k + 11)])
        T.finalize_reducer(acc0, res0)
        for i, c in T.Parallel(1, 4):
            o0[bx + i, c] = res0[i, c]
        a1_frag = T.alloc_fragment((1, 64), T.float32)
        acc1 = T.alloc_reducer((1, 4), T.float32, op="min")
        res1 = T.alloc_fragment((1, 4), T.float32)
        T.reducer_init(acc1)
        T.copy(a1[bx, 0], a1_frag)
        for c, k in T.Parallel(4, 11):
            T.reducer_update(acc1[0, c], a1_frag[0, (c * 16) + k] - res0[0, c])
        for c, k in T.Parallel(4, 5):
            T.reducer_update(acc1[0, c], a1_frag[0, (c * 16) + (k + 11)] - res0[0, c])
        T.finalize_reducer(acc1, res1)
        T.copy(res1, o1[bx, 0])
