# expect: ok
# input: x=[1, 2, 3, 4, 5, 6, 7, 8]
# expect: result out=[36.0]
#
# The file starts with a UTF-8 byte-order mark (as some editors write it): accepted.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        for j in T.Parallel(8):
            T.reducer_update(acc, 0, x[j])
        r = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, r)
        T.copy(r, out)
