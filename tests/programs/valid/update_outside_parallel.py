# expect: ok
# input: x=[1, 2, 3, 4, 5, 6, 7, 8]
# expect: result out=[111.0]
# expect: result legacy_out=[6.0]
#
# Updates outside any T.Parallel contribute once, not once per thread (128 threads run
# the kernel body): one at kernel level, one per iteration of a sequential T.serial loop,
# and one more after it:  out = 100 * x[0] + (x[1] + x[2] + x[3] + x[4]) + (x[4] - x[7])
# = 100 + 14 - 3 = 111. The legacy reducer gets x[5] = 6 once.
import tilelang.language as T

N = 8


@T.prim_func
def main(
    x: T.Tensor((N,), T.float32),
    out: T.Tensor((1,), T.float32),
    legacy_out: T.Tensor((1,), T.float32),
):
    with T.Kernel(1, threads=128) as bx:
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        T.reducer_update(acc[0], x[0] * 100.0)
        for k in T.serial(4):
            T.reducer_update(acc[0], x[k + 1])
        T.reducer_update(acc[0], x[4] - x[7])
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, out)

        legacy = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.fill(legacy, 0.0)
        legacy[0] += x[5]
        T.finalize_reducer(legacy)
        T.copy(legacy, legacy_out)
