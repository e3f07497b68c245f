# expect: error R209 at 18:17
#
# A guard compared in uint32: T.int32(-1) meets a uint32 and becomes 4294967295, so
# `j < -1` holds for every j and r[j + 8] is updated out of bounds: the mirror of
# tests/programs/valid/edge_unsigned_guard.py (the static check compares in uint32; read
# with the integers' truth, "never", only the interpreter's run caught it).
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.int32), out: T.Tensor((8,), T.int32)):
    with T.Kernel(1, threads=32) as bx:
        r = T.alloc_reducer((8,), T.int32, op="sum")
        T.reducer_init(r)
        for j in T.Parallel(8):
            T.reducer_update(r[j], x[j])
            if T.cast(j, T.uint32) < T.int32(-1):
                T.reducer_update(r[j + 8], x[j])  # <- R209
        f = T.alloc_fragment((8,), T.int32)
        T.finalize_reducer(r, f)
        T.copy(f, out)
