# expect: error R210 at 17
#
# Legacy surface: `+=` of a float32 value into an int32 reducer, no T.cast.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.int32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        cnt = T.alloc_reducer((1,), T.int32, op="sum", replication="all")
        T.clear(cnt)
        for j in T.Parallel(N):
            cnt[0] += x_frag[j] * 2.0  # <- R210
        T.finalize_reducer(cnt)
        T.copy(cnt, out)
