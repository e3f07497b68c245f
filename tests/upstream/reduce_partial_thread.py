# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_reduce.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: _make_partial_reduce_kernel; params: none
# changed: nothing (the rest of the file, torch and test code, dropped)
# constructs: factory, annotate_layout, T.Fragment-layout, reduce_sum, nested-factory
# blocked-by: none
# expect: ok
import tilelang
import tilelang.language as T
import tilelang.testing


def _make_partial_reduce_kernel():
    block_threads = 128
    fragment_threads = 64
    rows = 4
    width = 512
    vector_size = 8

    @tilelang.jit(
        out_idx=1,
        target="cuda",
        pass_configs={
            tilelang.PassConfigKey.TL_DISABLE_DATA_RACE_CHECK: True,
            tilelang.PassConfigKey.TL_DISABLE_THREAD_STORAGE_SYNC: True,
        },
    )
    def make_kernel():
        def x_layout(i: int, j: int) -> tuple[int, int]:
            return j // vector_size, i * vector_size + j % vector_size

        @T.prim_func
        def fragment_reduce(
            x: T.Tensor((rows, width), "float32"),
            out: T.Tensor((rows, width), "float32"),
        ) -> None:
            with T.Kernel(1, threads=block_threads):
                x_frag = T.alloc_fragment((rows, width), "float32")
                sum_frag = T.alloc_fragment((rows,), "float32")
                T.annotate_layout(
                    {
                        x_frag: T.Fragment(x_frag.shape, forward_fn=x_layout),
                        sum_frag: T.Fragment(
                            sum_frag.shape,
                            forward_fn=lambda i, rep: (rep, i),
                            replicate=fragment_threads,
                        ),
                    }
                )
                for i, j in T.Parallel(rows, width):
                    x_frag[i, j] = x[i, j]
                T.reduce_sum(x_frag, sum_frag, dim=1)
                for i, j in T.Parallel(rows, width):
                    out[i, j] = x_frag[i, j] / sum_frag[i]

        return fragment_reduce

    return make_kernel()
