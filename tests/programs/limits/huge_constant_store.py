# expect: error R102 at 13:20
# expect: error R102 at 15:27
# expect: error R102 at 17:34
#
# A constant an integer dtype cannot hold is an error, never a wrapped value.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.int32), out: T.Tensor((1,), T.int32)):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(8):
            x[j] = 2**40
        for j in T.Parallel(8):
            x[j] = x[j] + 2**63
        acc = T.alloc_reducer((1,), T.int32, op="sum")
        T.reducer_update(acc, 0, 2**31)
        T.finalize_reducer(acc, out)
