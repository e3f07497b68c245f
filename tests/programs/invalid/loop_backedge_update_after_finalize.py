# expect: error R201 at 23
# expect: error R208 at 24
#
# The epoch opens before a serial loop but is finalized inside it: init and finalize are
# in different scopes (the finalize runs every iteration, the init once), and the second
# iteration updates a finalized reducer, which only the path around the loop's back edge
# shows. Move T.reducer_init into the loop, or the finalize after it.
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
            T.finalize_reducer(acc, result)  # <- R208
        T.copy(result, out)
