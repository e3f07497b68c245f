# expect: error R300 at 22:46
#
# The issue #12 shape, except that the copy runs in warp group 0 and the serial-row loop
# in warp group 1. A copy adopts whatever layout a loop needs, but only on its own
# threads: x_frag written by threads 0..127 cannot be held by threads 128..255, which
# read it. No root of the search places it, so R300 names both demands.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((3, 32), T.float32), out: T.Tensor((3,), T.float32)):
    with T.Kernel(1, threads=256) as bx:
        x_frag = T.alloc_fragment((3, 32), T.float32)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        with T.ws(0):
            T.copy(x, x_frag)
        with T.ws(1):
            for it in T.serial(3):
                T.reducer_init(acc)
                for j in T.Parallel(32):
                    T.reducer_update(acc[0], x_frag[it, j])  # <- R300
                T.finalize_reducer(acc, result)
                out[it] = result[0]
