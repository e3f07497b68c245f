# expect: error R202 at 24
#
# One epoch per serial iteration, finalized only where the mask says so, but updated
# on every iteration: an iteration whose mask is 0 leaves contributions in the epoch,
# and the next iteration's init opens a new one over them (and the last iteration's
# can reach the end of the kernel). Block-uniform, yet lossy: R202 at the init.
import tilelang.language as T

N = 8


@T.prim_func
def main(
    x: T.Tensor((4, N), T.float32),
    mask: T.Tensor((4,), T.int32),
    out: T.Tensor((4,), T.float32),
):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((4, N), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        for k in T.serial(4):
            T.reducer_init(acc)  # <- R202
            for j in T.Parallel(N):
                T.reducer_update(acc[0], x_frag[k, j])
            if mask[k] != 0:
                T.finalize_reducer(acc, result)
                out[k] = result[0]
