# expect: ok
# input: x=arange(0, 256)
# expect: result v2_out=[120.0, 376.0, 632.0, 888.0, 1144.0, 1400.0, 1656.0, 1912.0, 2168.0, 2424.0, 2680.0, 2936.0, 3192.0, 3448.0, 3704.0, 3960.0]
# expect: result legacy_out=[120.0, 376.0, 632.0, 888.0, 1144.0, 1400.0, 1656.0, 1912.0, 2168.0, 2424.0, 2680.0, 2936.0, 3192.0, 3448.0, 3704.0, 3960.0]
#
# `batch=` on finalize is a code-generation hint and never changes which values are
# reduced: every one of the 16 outputs is finalized, not only the first `batch`
# (TileLang #2623), in the v2 and in the legacy in-place form.
import tilelang.language as T

R = 16
C = 16


@T.prim_func
def main(
    x: T.Tensor((R, C), T.float32),
    v2_out: T.Tensor((R,), T.float32),
    legacy_out: T.Tensor((R,), T.float32),
):
    with T.Kernel(1, threads=256) as bx:
        x_frag = T.alloc_fragment((R, C), T.float32)
        T.copy(x, x_frag)

        acc = T.alloc_reducer((R,), T.float32, op="sum")
        T.reducer_init(acc)
        for i, j in T.Parallel(R, C):
            T.reducer_update(acc[i], x_frag[i, j])
        result = T.alloc_fragment((R,), T.float32)
        T.finalize_reducer(acc, result, batch=4)
        T.copy(result, v2_out)

        o = T.alloc_reducer((R,), T.float32, op="sum", replication="all")
        T.clear(o)
        for i, j in T.Parallel(R, C):
            o[i] += x_frag[i, j]
        T.finalize_reducer(o, batch=4)
        T.copy(o, legacy_out)
