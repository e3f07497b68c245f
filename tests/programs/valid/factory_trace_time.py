# expect: ok
# params: M=16, N=8, op="max", dst_scope="shared"
#
# The Python-level code a factory runs while TileLang traces its kernel, read without
# running it: `if` on factory arguments choosing which statements exist (a buffer
# allocated in the branch taken is in scope after it, as in Python), a ternary on a
# string, tuples, a helper of the same file that emits the reduction (with its
# `**kwargs`), a helper that returns a value, `buffer.dtype`/`buffer.shape` as values, a
# factory assertion that holds, and a parameter that is a TileLang function.
import tilelang
import tilelang.language as T


def _reduce_op(T, op, src, dst, dim, clear=True):
    kwargs = {} if clear else {"clear": False}
    if op == "sum":
        T.reduce_sum(src, dst, dim=dim, **kwargs)
    elif op == "max":
        T.reduce_max(src, dst, dim=dim, **kwargs)
    else:
        T.reduce_min(src, dst, dim=dim, **kwargs)


def _rows_per_block(m, split):
    rows = m // split
    if rows < 1:
        return 1
    return rows


@tilelang.jit(out_idx=[-1])
def kernel(M, N, op, dst_scope, fill_fn=T.clear):
    assert op in ("sum", "max", "min")
    shape = (M, N)
    rows, cols = shape
    block_M = _rows_per_block(rows, 2)

    @T.prim_func
    def main(A: T.Tensor(shape, "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(rows, block_M), threads=128) as bx:
            src = T.alloc_fragment((block_M, cols), A.dtype)
            if dst_scope == "fragment":
                dst = T.alloc_fragment((block_M,), B.dtype)
            else:
                dst = T.alloc_shared((src.shape[0],), B.dtype)
            fill_fn(dst)
            T.copy(A[bx * block_M, 0], src)
            _reduce_op(T, op, src, dst, dim=1, clear=op == "sum")
            scale = 2.0 if op == "sum" else 1.0
            for i in T.Parallel(block_M):
                B[bx * block_M + i] = dst[i] * scale

    return main
