# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_warp_reduce.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: get_kernel; params: reduce_op='sum', dtype=T.float32
# changed: nothing (the rest of the file, torch and test code, dropped)
# constructs: factory, factory-param-without-default, get_thread_binding(dim), alloc_local, warp_reduce, if-on-param
# blocked-by: factory-param-without-default
# expect: error R102 at 15
# bound-blocked-by: none
# bound: ok
import tilelang
import tilelang.testing
import tilelang.language as T


@tilelang.jit
def get_kernel(reduce_op: str, dtype: str):
    assert reduce_op in ["sum", "max", "min", "bitand", "bitor"]

    @T.prim_func
    def main(x: T.Tensor((32), dtype)):
        with T.Kernel(1, threads=32):
            tx = T.get_thread_binding(0)
            local_val = T.alloc_local([1], dtype)
            local_val[0] = x[tx]
            reduced_val = T.alloc_local([1], dtype)
            if reduce_op == "sum":
                reduced_val[0] = T.warp_reduce_sum(local_val[0])
            elif reduce_op == "max":
                reduced_val[0] = T.warp_reduce_max(local_val[0])
            elif reduce_op == "min":
                reduced_val[0] = T.warp_reduce_min(local_val[0])
            elif reduce_op == "bitand":
                reduced_val[0] = T.warp_reduce_bitand(local_val[0])
            elif reduce_op == "bitor":
                reduced_val[0] = T.warp_reduce_bitor(local_val[0])
            x[tx] = reduced_val[0]

    return main
