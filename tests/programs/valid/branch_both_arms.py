# expect: ok
# input: x=[3, -1, 4, -1, 5, -9, 2, 6]
# input: flag=[1]
# expect: result out=[103.0]
# expect: result picked=[6.0]
#
# Updates on both arms of a data-dependent if/else inside T.Parallel (positives add
# themselves, the rest add their square), and a block-uniform branch on a global flag
# around a whole epoch (open, update, finalize on one arm; the other arm opens and
# finalizes an empty epoch): both are legal because every path finalizes exactly once.
import tilelang.language as T

N = 8


@T.prim_func
def main(
    x: T.Tensor((N,), T.float32),
    flag: T.Tensor((1,), T.int32),
    out: T.Tensor((1,), T.float32),
    picked: T.Tensor((1,), T.float32),
):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(N):
            if x_frag[j] > 0:
                T.reducer_update(acc[0], x_frag[j])
            else:
                T.reducer_update(acc[0], x_frag[j] * x_frag[j])
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, out)

        mx = T.alloc_reducer((1,), T.float32, op="max")
        m_res = T.alloc_fragment((1,), T.float32)
        if flag[0] > 0:
            T.reducer_init(mx)
            for j in T.Parallel(N):
                T.reducer_update(mx[0], x_frag[j])
            T.finalize_reducer(mx, m_res)
        else:
            T.reducer_init(mx, 0.0)
            T.finalize_reducer(mx, m_res)
        T.copy(m_res, picked)
