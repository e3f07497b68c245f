# expect: error R201 at 22
# expect: error R203 at 23
#
# The epoch opens before a serial loop but is finalized inside it: the second iteration
# updates a finalized reducer (found only around the loop's back edge) and finalizes it
# again. Move T.reducer_init into the loop, or the finalize after it.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        T.reducer_init(acc)
        for k in T.serial(2):
            for j in T.Parallel(N):
                T.reducer_update(acc[0], x_frag[j])  # <- R201
            T.finalize_reducer(acc, result)  # <- R203
        T.copy(result, out)
