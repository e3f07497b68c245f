# expect: ok
# input: x=arange(0, 96)
# expect: result out=[496.0, 1520.0, 2544.0]
# expect: result sums=[496.0, 1520.0, 2544.0]
#
# The serial-row loop places x_frag replicated (column j on threads j and 32 + j, one
# slot per row); a T.reduce_sum over the same fragment then reads each element from one
# of its replicas and delivers every row sum to all 64 threads. Both give 1024*r + 496.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((3, 32), T.float32), out: T.Tensor((3,), T.float32),
         sums: T.Tensor((3,), T.float32)):
    with T.Kernel(1, threads=64) as bx:
        x_frag = T.alloc_fragment((3, 32), T.float32)
        s_frag = T.alloc_fragment((3,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        for it in T.serial(3):
            T.reducer_init(acc)
            for j in T.Parallel(32):
                T.reducer_update(acc[0], x_frag[it, j])
            T.finalize_reducer(acc, result)
            out[it] = result[0]
        T.reduce_sum(x_frag, s_frag, dim=1)
        T.copy(s_frag, sums)
