# expect: ok
# input: x=arange(0, 32)
# expect: result total=[496.0]
# expect: result grid=[[24.0, 28.0, 32.0, 36.0], [88.0, 92.0, 96.0, 100.0]]
#
# The RFC's own update spelling: T.reducer_update(handle, index, value) with a scalar
# index for a 1-element reducer and an index tuple for a 2-D one; allocation opens the
# epoch at the identity (no init call).
import tilelang.language as T

N = 32


@T.prim_func
def main(
    x: T.Tensor((N,), T.float32),
    total: T.Tensor((1,), T.float32),
    grid: T.Tensor((2, 4), T.float32),
):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        acc2 = T.alloc_reducer((2, 4), T.float32, op="sum")
        for j in T.Parallel(N):
            T.reducer_update(acc, 0, x_frag[j])
        for h, k, e in T.Parallel(2, 4, 4):
            T.reducer_update(acc2, (h, k), x_frag[h * 16 + e * 4 + k])
        r1 = T.alloc_fragment((1,), T.float32)
        r2 = T.alloc_fragment((2, 4), T.float32)
        T.finalize_reducer(acc, r1)
        T.finalize_reducer(acc2, r2)
        T.copy(r1, total)
        T.copy(r2, grid)
