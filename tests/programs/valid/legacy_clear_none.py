# expect: ok
# input: x=arange(0, 256)
# expect: result out=[1920.0, 1936.0, 1952.0, 1968.0, 1984.0, 2000.0, 2016.0, 2032.0, 2048.0, 2064.0, 2080.0, 2096.0, 2112.0, 2128.0, 2144.0, 2160.0]
#
# Legacy replication="none" with T.clear as the epoch start: the physical replication
# policy written on the allocation does not change the meaning (column sums here).
import tilelang.language as T

R = 16
C = 16


@T.prim_func
def main(x: T.Tensor((R, C), T.float32), out: T.Tensor((C,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((R, C), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((C,), T.float32, op="sum", replication="none")
        T.clear(acc)
        for i, j in T.Parallel(R, C):
            acc[j] += x_frag[i, j]
        T.finalize_reducer(acc)
        T.copy(acc, out)
