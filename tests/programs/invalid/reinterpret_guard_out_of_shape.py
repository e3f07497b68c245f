# expect: error R209 at 18
#
# `T.reinterpret(j - 2, "uint32") < 5` holds for 2 <= j < 7 (j - 2 < 0 wraps past 2**31):
# j = 6 updates m[4], one past the reducer's shape. The static check models the
# reinterpretation between integers as the wrapping conversion it is, so it finds j = 6
# (tests/programs/valid/reinterpret_index.py bounds it by 4).
import tilelang.language as T


@T.prim_func
def main(mid: T.Tensor((4,), T.int32)):
    with T.Kernel(1, threads=32) as bx:
        m = T.alloc_reducer((4,), T.int32, op="sum")
        T.reducer_init(m)
        for j in T.Parallel(8):
            # one value too many passes the guard
            if T.reinterpret(j - 2, "uint32") < 5:
                T.reducer_update(m[j - 2], j)  # <- R209
        r = T.alloc_fragment((4,), T.int32)
        T.finalize_reducer(m, r)
        T.copy(r, mid)
