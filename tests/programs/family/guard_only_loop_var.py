# expect: ok
# for-all: N in 64..65536
#
# Regression (family bounds proof): `k` appears only in the guard `i < k`, never in an
# index. With k in 0..63 the guard keeps i below 64 <= N, so every access is in bounds for
# every N; the proof used to encode the guard after copying the range facts of the
# variables, so k's range was lost and an out-of-bounds read was reported (R220 at N=64).
import tilelang.language as T

N = 256
THREADS = 128


@T.prim_func
def main(w: T.Tensor((64,), T.float32), x: T.Tensor((N,), T.float32),
         y: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=THREADS) as bx:
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for i in T.Parallel(64):
            T.reducer_update(acc[0], w[i])
        T.finalize_reducer(acc)
        out[0] = acc[0]
        for k in T.serial(64):
            for i in T.Parallel(THREADS):
                if i < k:
                    y[i] = x[i]
