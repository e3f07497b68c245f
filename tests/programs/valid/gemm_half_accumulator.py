# expect: ok
#
# float16 × float16 into a float16 accumulator (TileLang's mma takes it): the products
# are rounded into float16 by the accumulation, which the bound admits (docs/semantics.md §9.1); two gemms
# accumulate into one C, the second on top of the first.
import tilelang.language as T


@T.prim_func
def main(a: T.Tensor((32, 16), T.float16), b: T.Tensor((16, 32), T.float16),
         c: T.Tensor((32, 32), T.float16)):
    with T.Kernel(1, threads=64) as bx:
        a_s = T.alloc_shared((32, 16), T.float16)
        b_s = T.alloc_shared((16, 32), T.float16)
        acc = T.alloc_fragment((32, 32), T.float16)
        T.copy(a, a_s)
        T.copy(b, b_s)
        T.clear(acc)
        T.gemm(a_s, b_s, acc)
        T.gemm(a_s, b_s, acc)
        T.copy(acc, c)
