# expect: ok
# input: a0=[[-3.0,-1.0,2.0,1.0,0.0,2.0,3.0,0.0,-3.0,4.0,1.0,4.0,2.0,4.0,-1.0,1.0,-3.0,-2.0,-1.0,-4.0,-1.0,1.0,3.0,0.0,3.0,-4.0,2.0,-3.0,0.0,4.0,1.0,2.0,1.0,4.0,4.0,-2.0,2.0,-1.0,4.0,1.0,0.0,-1.0,-1.0,-4.0,1.0,0.0,2.0,1.0]]
# input: a1=[[8.0,-2.0,0.0,7.0,-7.0,7.0,2.0,-8.0,0.0,-1.0,2.0,2.0,-1.0,-2.0,1.0,8.0,-6.0,-3.0,3.0,7.0,-8.0,-3.0,-8.0,7.0,-7.0,-7.0,1.0,6.0,3.0,6.0,8.0,1.0,-3.0,-3.0,5.0,-2.0,-1.0,-6.0,-1.0,-4.0,4.0,0.0,-6.0,0.0,-5.0,-1.0,2.0,6.0]]
# expect: result o0=[[9.0,16.0]]
# expect: result o1=[[-1.0,-8.0]]
#
# Issue #12, two update loops per epoch over one row of a fragment on 64 threads, with a
# consumer: res0[0, i] sums a0_frag[0, 24*i + k] over two T.Parallel loops (k < 10, then
# k + 10 for k < 14), and acc1 takes the max of a1_frag[0, 24*i + k] - res0[0, i] over
# the same split. Both loops of the consumer read res0 and a1_frag; a1_frag is placed
# through the inverse of the first loop's gapped index. o0[0, i] is the sum of
# a0[0, 24*i:24*i + 24], o1[0, i] the max of a1[0, 24*i:24*i + 24] - o0[0, i] (numpy).
import tilelang.language as T


@T.prim_func
def main(
    a0: T.Tensor((1, 48), T.float32),
    a1: T.Tensor((1, 48), T.float32),
    o0: T.Tensor((1, 2), T.float32),
    o1: T.Tensor((1, 2), T.float32),
):
    with T.Kernel(1, threads=64) as bx:
        a0_frag = T.alloc_fragment((1, 48), T.float32)
        acc0 = T.alloc_reducer((1, 2), T.float32, op="sum")
        res0 = T.alloc_fragment((1, 2), T.float32)
        T.reducer_init(acc0)
        T.copy(a0[0, 0], a0_frag)
        for i, k in T.Parallel(2, 10):
            T.reducer_update(acc0[0, i], a0_frag[0, (i * 24) + k])
        for i, k in T.Parallel(2, 14):
            T.reducer_update(acc0[0, i], a0_frag[0, (i * 24) + (k + 10)])
        T.finalize_reducer(acc0, res0)
        T.copy(res0, o0[0, 0])
        a1_frag = T.alloc_fragment((1, 48), T.float32)
        acc1 = T.alloc_reducer((1, 2), T.float32, op="max")
        res1 = T.alloc_fragment((1, 2), T.float32)
        T.reducer_init(acc1)
        T.copy(a1[0, 0], a1_frag)
        for i, k in T.Parallel(2, 10):
            T.reducer_update(acc1[0, i], a1_frag[0, (i * 24) + k] - res0[0, i])
        for i, k in T.Parallel(2, 14):
            T.reducer_update(acc1[0, i], a1_frag[0, (i * 24) + (k + 10)] - res0[0, i])
        T.finalize_reducer(acc1, res1)
        T.copy(res1, o1[0, 0])
