# expect: ok
# input: x=arange(1, 49)
# expect: result out=[1176.0]
#
# 48 iterations on 128 threads: two replicas (threads 0..95), threads 96..127 idle. A
# butterfly over a 48-wide group drops lanes (TileLang #2542 returned 528); the logical
# answer is 1 + ... + 48 = 1176.
import tilelang.language as T

N = 48


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        total = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.clear(total)
        for j in T.Parallel(N):
            total[0] += x_frag[j]
        T.finalize_reducer(total)
        T.copy(total, out)
