# expect: error R100 at 18:13
#
# Issue 24: `with T.ws(...)` inside `T.Parallel` ended in a KeyError (exit 4). A warp
# group is a branch on the thread index, and a T.Parallel iteration has no thread until
# layout inference spreads the loop over threads: refused, with the hint to put the warp
# group around the loop.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((64,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=256) as bx:
        x_frag = T.alloc_fragment((64,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(64):
            with T.ws(1):
                T.reducer_update(acc[0], x_frag[j])
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, out)
