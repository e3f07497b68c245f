# expect: error R208 at 22
#
# The epoch opens inside the consumer warp group (participants 128..255) but is finalized
# outside it, at kernel level (participants 0..255): init and finalize must be in the same
# scope so the participant set is one set.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=256) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        with T.ws(1):
            T.reducer_init(acc)
            for j in T.Parallel(N):
                T.reducer_update(acc[0], x_frag[j])
        T.finalize_reducer(acc, result)  # <- R208
        T.copy(result, out)
