# expect: error R102 at 13:5
# params: op="prod"
#
# A factory's assertion that fails for the parameters bound: TileLang's factory raises
# before any kernel exists, and so the check stops there, naming the bound parameters.
import tilelang
import tilelang.language as T


@tilelang.jit
def kernel(op, M=16):
    block = 16
    assert op in ("sum", "max")  # <- R102

    @T.prim_func
    def main(A: T.Tensor((M, block), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=128):
            a = T.alloc_fragment((M, block), "float32")
            b = T.alloc_fragment((M,), "float32")
            T.copy(A, a)
            T.reduce_sum(a, b, dim=1)
            T.copy(b, B)

    return main
