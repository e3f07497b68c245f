# expect: error R101 at 11:9
# expect: error R102 at 13:13
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((8,), T.float32)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.frobnicate(out[0], x[0])
        for j in T.Parallel(8):
            x_frag[j, 0] = x[j]
            T.reducer_update(acc[0], x_frag[j])
        T.finalize_reducer(acc, out)
