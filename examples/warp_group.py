# expect: ok
# input: x=arange(1, 65)
# expect: result out=[2080.0]
#
# A reducer epoch inside a warp-specialized consumer group. With threads=256, T.ws(0) is
# the producer warp group (threads 0..127) and T.ws(1) the consumer (threads 128..255).
# The producer stages x in shared memory; the consumer owns the whole epoch: init, a
# T.Parallel(64) update (2 replicas inside the 128-thread group) and finalize. The
# collective's participant set is [128, 256), not [0, 128) and not all 256 threads
# (TileLang #2346). sum(1..64) = 2080.
import tilelang.language as T

N = 64
THREADS = 256


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=THREADS) as bx:
        x_shared = T.alloc_shared((N,), T.float32)
        with T.ws(0):
            T.copy(x, x_shared)
        with T.ws(1):
            x_frag = T.alloc_fragment((N,), T.float32)
            T.copy(x_shared, x_frag)
            acc = T.alloc_reducer((1,), T.float32, op="sum")
            T.reducer_init(acc)
            for j in T.Parallel(N):
                T.reducer_update(acc[0], x_frag[j])
            result = T.alloc_fragment((1,), T.float32)
            T.finalize_reducer(acc, result)
            T.copy(result, out)
