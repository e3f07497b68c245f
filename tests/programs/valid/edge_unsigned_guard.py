# expect: ok
# input: x=[1, 2, 3, 4, 5, 6, 7, 8]
# expect: result out=[1, 2, 3, 4, 5, 6, 7, 8]
#
# A guard compared in uint32: T.int32(-1) meets a uint32 and becomes 4294967295 (C's
# conversion, TVM's type), so `j > -1` never holds and the update of r[j + 8] never
# runs. The index check's Z3 encoding compares in the operand dtype too (it once read
# the guard as the integers' truth, always true, and called r[j + 8] out of bounds).
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.int32), out: T.Tensor((8,), T.int32)):
    with T.Kernel(1, threads=32) as bx:
        r = T.alloc_reducer((8,), T.int32, op="sum")
        T.reducer_init(r)
        for j in T.Parallel(8):
            T.reducer_update(r[j], x[j])
            if T.cast(j, T.uint32) > T.int32(-1):
                T.reducer_update(r[j + 8], x[j])
        f = T.alloc_fragment((8,), T.int32)
        T.finalize_reducer(r, f)
        T.copy(f, out)
