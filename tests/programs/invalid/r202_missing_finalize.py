# expect: error R202 at 15
#
# RFC surface: allocation opens the epoch (the identity is implicit) and updates follow,
# but the reducer is never finalized, so the contributions never leave the threads.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")  # <- R202
        for j in T.Parallel(N):
            T.reducer_update(acc, (0,), x_frag[j])
