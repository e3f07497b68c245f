# expect: ok
# input: x=[1, 2, 3, 4, 5, 6, 7, 8]
# expect: result out=[36.0]
# expect: result y=[38.0, 40.0, 42.0, 44.0, 46.0, 48.0, 50.0, 52.0]
#
# An ordinary replicated fragment write beside a reducer update in one T.Parallel body.
# The loop runs on 16 replicas of 8 threads; y_frag must be written by every replica
# (each thread reads its own copy later), while each x[j] enters the sum once. Guarding
# the whole loop body to one replica would leave 15 copies of y_frag uninitialized;
# only the update may be deduplicated. y = 2 * x + sum(x).
import tilelang.language as T

BD = 8
THREADS = 128


@T.prim_func
def main(
    x: T.Tensor((BD,), T.float32),
    y: T.Tensor((BD,), T.float32),
    out: T.Tensor((1,), T.float32),
):
    with T.Kernel(1, threads=THREADS) as bx:
        x_frag = T.alloc_fragment((BD,), T.float32)
        y_frag = T.alloc_fragment((BD,), T.float32)
        T.copy(x, x_frag)

        total = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(total)
        for j in T.Parallel(BD):
            y_frag[j] = x_frag[j] * 2.0
            T.reducer_update(total[0], x_frag[j])

        s = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(total, s)

        for j in T.Parallel(BD):
            y[j] = y_frag[j] + s[0]
        T.copy(s, out)
