# expect: error R102 at 15:31
# Found by the mangled-program campaign (verify/fuzzing/mangle.py): T.Pipelined over 2**57 stages: MemoryError in codegen/layout_access.py:serial_scope.
# The tool crashed on it (exit 4) until sizes, constants and depths got their limits.
import tilelang.language as T

N = 8


@T.prim_func
def main(A: T.Tensor((32, 64), T.float32), out: T.Tensor((32,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        a_frag = T.alloc_fragment((32, 64), T.float32)
        acc = T.alloc_reducer((32,), T.float32, op="sum")
        T.reducer_init(acc)
        for ko in T.Pipelined(T.ceildiv(2**63, 64), num_stages=2):
            T.copy(A, a_frag)
            for i, k in T.Parallel(32, 64):
                T.reducer_update(acc[i], a_frag[i, k])
        result = T.alloc_fragment((32,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, out)
