# expect: error R102 at 10:35
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        acc = T.alloc_reducer((4, 2), T.float32, op="sum")
        for j in T.Parallel(8):
            T.reducer_update(acc, (j,), x[j])
