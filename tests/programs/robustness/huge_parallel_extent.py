# expect: error R102 at 16:21
# Found by the mangled-program campaign (verify/fuzzing/mangle.py): T.Parallel(1, 2**63): ValueError in codegen/layout_rules.py:_element_indices (2**40: MemoryError).
# The tool crashed on it (exit 4) until sizes, constants and depths got their limits.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((1, 96), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((1, 96), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for i, j in T.Parallel(1, 2**63):
            T.reducer_update(acc[i], x_frag[i, j])
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, out)
