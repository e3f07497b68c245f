# expect: ok
# input: x=arange(0, 96)
# expect: result out=[1128.0, 3432.0]
#
# A 2x48 loop on 128 threads: 96 iterations, one replica, and each row's 48 contributions
# land on a thread range (0..47, 48..95) that is not a power-of-two group.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((2, 48), T.float32), out: T.Tensor((2,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((2, 48), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((2,), T.float32, op="sum")
        T.reducer_init(acc)
        for i, j in T.Parallel(2, 48):
            T.reducer_update(acc[i], x_frag[i, j])
        result = T.alloc_fragment((2,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, out)
