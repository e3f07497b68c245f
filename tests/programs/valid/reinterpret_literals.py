# expect: ok
# input: x=[0.25, -3.5]
# expect: result c=[1.5, -1.0, 2.0, 0.25]
# expect: result u=[3221225472, 1036831949, 3227516928, 1]
#
# T.reinterpret of Python numbers and its other spellings (docs/semantics.md §8). A
# Python int is an int32 constant and a Python float a float32 one, as TVM converts them
# before reinterpreting: 1069547520 = 0x3FC00000 = 1.5, -1082130432 = 0xBF800000 = -1.0;
# -2.0 = 0xC0000000 = 3221225472, and 0.1 is first the float32 nearest it, 0x3DCCCCCD =
# 1036831949. TileLang still takes the old order T.reinterpret(dtype, value) (with a
# deprecation warning): 0x40000000 = 2.0. `dtype=` may be a keyword: -3.5 = -1.75 * 2 =
# 0xC0600000 = 3227516928. Reinterpreting a value as its own dtype is the value itself
# (TVM returns it unchanged): 0.25; and an int32 as int32 is 1.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((2,), T.float32), c: T.Tensor((4,), T.float32),
         u: T.Tensor((4,), T.uint32)):
    with T.Kernel(1, threads=32) as bx:
        c[0] = T.reinterpret(1069547520, "float32")
        c[1] = T.reinterpret(-1082130432, T.float32)
        c[2] = T.reinterpret("float32", 1073741824)
        c[3] = T.reinterpret(x[0], T.float32)
        u[0] = T.reinterpret(-2.0, "uint32")
        u[1] = T.reinterpret(0.1, "uint32")
        u[2] = T.reinterpret(x[1], dtype=T.uint32)
        u[3] = T.reinterpret(T.reinterpret(1, "int32"), "uint32")
