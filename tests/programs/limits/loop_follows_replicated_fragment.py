# expect: error R102 at 18:38
#
# Issue 24: a loop that follows a replicated fragment runs each iteration on every
# replica. x_frag (8 elements, copied whole) is held 128 times over 1024 threads, so a
# T.Parallel(2**16) reading x_frag[i % 8] has 2**23 (iteration, replica) cells, past the
# 2**20 layout inference evaluates (docs/limits.md): R102 before anything that size is
# built (the deep program with 2**20 lanes took 2 GB and timed out).
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32), y: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=1024) as bx:
        x_frag = T.alloc_fragment((8,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        for i in T.Parallel(2**16):
            T.reducer_update(acc[0], x_frag[i % 8])
        T.finalize_reducer(acc)
        y[0] = acc[0]
