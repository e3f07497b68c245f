# expect: error R102 at 17
#
# A sum into shared memory by a plain read-modify-write in a T.Parallel: every iteration
# reads s[0], then stores s[0] + X[j]. The iterations have no order, so two of them can
# both read s[0] before either stores it, and one update is lost; the interpreter sees
# iterations storing different values to one element and says it is a read-modify-write
# (interp/memory.check_race). T.atomic_add, or a reducer, is the fix.
import tilelang.language as T


@T.prim_func
def main(X: T.Tensor((32,), T.float32), Out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        s = T.alloc_shared((1,), T.float32)
        T.clear(s)
        for j in T.Parallel(32):
            s[0] = s[0] + X[j]  # <- R102
        Out[0] = s[0]
