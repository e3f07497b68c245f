# expect: ok
#
# A histogram: each element of the tile adds 1 to the bin its value selects, a reducer
# output index that depends on data. The bin is known only at run time, so every update
# is a select over the thread's 64 partials (read and write); unrolled over the loop's 128
# slots that is 16 K selects, past codegen.cuda_cells.SELECT_LIMIT, and the loop is
# rendered rolled (`#pragma unroll 1`), each a0_frag slot a select too. The fast plan is
# refused (R400: the output index is not affine); the canonical plan counts every element
# exactly once.
import tilelang.language as T


@T.prim_func
def main(
    a0: T.Tensor((32, 128), T.int32),
    o0: T.Tensor((64,), T.int32),
):
    with T.Kernel(1, threads=32) as bx:
        a0_frag = T.alloc_fragment((32, 128), T.int32)
        hist = T.alloc_reducer((64,), T.int32, op="sum")
        res0 = T.alloc_fragment((64,), T.int32)
        T.reducer_init(hist)
        T.copy(a0[0, 0], a0_frag)
        for i, k in T.Parallel(32, 128):
            T.reducer_update(hist[a0_frag[i, k] % 64], 1)
        T.finalize_reducer(hist, res0)
        T.copy(res0, o0[0])
