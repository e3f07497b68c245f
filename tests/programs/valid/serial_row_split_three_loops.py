# expect: ok
# input: a0=[[6.0,-5.0,-8.0,2.0,-2.0,-1.0,-7.0,-2.0,2.0,-2.0,6.0,5.0,3.0,7.0,4.0,-5.0,6.0,3.0,-7.0,-3.0,-6.0,8.0,4.0,7.0,-4.0,2.0,2.0,4.0,-6.0,0.0,2.0,6.0,3.0,-1.0,-1.0,-3.0,-6.0,-4.0,-6.0,-5.0],[6.0,0.0,-7.0,-1.0,-4.0,3.0,6.0,-8.0,-1.0,-1.0,8.0,-2.0,-6.0,-5.0,0.0,2.0,-3.0,-1.0,3.0,-3.0,8.0,-5.0,7.0,6.0,8.0,5.0,0.0,2.0,-5.0,-3.0,-1.0,8.0,5.0,1.0,2.0,-1.0,-1.0,7.0,-8.0,-3.0],[-2.0,3.0,-1.0,-3.0,-7.0,-4.0,-7.0,3.0,-1.0,-5.0,1.0,0.0,0.0,1.0,2.0,-5.0,-6.0,4.0,8.0,1.0,-1.0,2.0,-8.0,-2.0,-2.0,-1.0,4.0,0.0,6.0,-1.0,-8.0,3.0,5.0,1.0,7.0,-1.0,5.0,-8.0,-8.0,5.0]]
# expect: result o0=[[2.0,-4.0],[-14.0,32.0],[-18.0,-2.0]]
#
# Issue #12, the serial-row class with three update loops per epoch on 64 threads: row
# `it` of a0_frag (3, 40) is read as a0_frag[it, 20*i + k] by three T.Parallel loops
# over the columns [0, 7), [7, 13) and [13, 20) of each half i. Each index leaves a gap
# between its digits (20*i + k over k < 7; 20 is no multiple of 7), and the copy's
# default partition moves each column's holders with the row: one loop places a0_frag
# through the inverse of its index (the columns it never touches on the same threads, a
# slot further up), the other two follow a0_frag, and the whole-tile copy adopts that
# layout. o0[it, i] is the sum of a0[it, 20*i:20*i + 20] (numpy).
import tilelang.language as T


@T.prim_func
def main(
    a0: T.Tensor((3, 40), T.float32),
    o0: T.Tensor((3, 2), T.float32),
):
    with T.Kernel(1, threads=64) as bx:
        a0_frag = T.alloc_fragment((3, 40), T.float32)
        acc0 = T.alloc_reducer((2,), T.float32, op="sum")
        res0 = T.alloc_fragment((2,), T.float32)
        T.copy(a0[0, 0], a0_frag)
        for it in T.serial(3):
            T.reducer_init(acc0)
            for i, k in T.Parallel(2, 7):
                T.reducer_update(acc0[i], a0_frag[it, (i * 20) + k])
            for i, k in T.Parallel(2, 6):
                T.reducer_update(acc0[i], a0_frag[it, (i * 20) + (k + 7)])
            for i, k in T.Parallel(2, 7):
                T.reducer_update(acc0[i], a0_frag[it, (i * 20) + (k + 13)])
            T.finalize_reducer(acc0, res0)
            T.copy(res0, o0[it, 0:2])
