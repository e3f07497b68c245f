# expect: error R600 at 32:5
# expect: error R600 at 36:1
# expect: error R600 at 40:39
# expect: error R600 at 45:39
# expect: error R600 at 50:2
# expect: error R600 at 55:2
# expect: error R600 at 62:12
# expect: error R600 at 67:12
# expect: error R600 at 72:12
# expect: error R600 at 77:12
# expect: error R600 at 82:16
# expect: error R600 at 87:17
# expect: error R600 at 92:12
# expect: error R600 at 96:1
# expect: error R600 at 106:1
# expect: error R602 at 110:21
#
# Every way a `@T.reducer_op` declaration can be malformed is R600 at its construct (the
# frontend reports them all at once); a float reducer op is refused, R602.
import tilelang.language as T

BIG = 1 << 40


def helper(a, b):
    return a


@T.reducer_op(dtype=T.int32, identity=0)
def two_statements(a, b):
    c = a + b
    return c


@T.reducer_op(dtype=T.int32, identity=0)
def three(a, b, c):
    return a


@T.reducer_op(dtype=T.int32, identity=BIG)
def identity_too_big(a, b):
    return a + b


@T.reducer_op(dtype=T.int32, identity=helper)
def identity_not_constant(a, b):
    return a + b


@T.reducer_op(dtype=T.int32)
def no_identity(a, b):
    return a + b


@T.reducer_op
def bare(a, b):
    return a + b


@T.reducer_op(dtype=T.int32, identity=0)
def divides(a, b):
    return a // b


@T.reducer_op(dtype=T.int32, identity=0)
def calls_abs(a, b):
    return T.abs(a) + b


@T.reducer_op(dtype=T.int32, identity=0)
def subscript(a, b):
    return a[0]


@T.reducer_op(dtype=T.int32, identity=0)
def mixes_dtypes(a, b):
    return T.cast(a, T.int16) + b


@T.reducer_op(dtype=T.int32, identity=0)
def unknown_name(a, b):
    return a + c


@T.reducer_op(dtype=T.int32, identity=0)
def shift_too_far(a, b):
    return a << 32


@T.reducer_op(dtype=T.int32, identity=0)
def returns_bool(a, b):
    return a < b


@T.reducer_op(dtype=T.int32, identity=0)
def max(a, b):
    return a if a > b else b


@T.reducer_op(dtype=T.int32, identity=0)
def twice(a, b):
    return a | b


@T.reducer_op(dtype=T.int32, identity=0)
def twice(a, b):
    return a ^ b


@T.reducer_op(dtype=T.float32, identity=0)
def fadd(a, b):
    return a + b


@T.prim_func
def main(x: T.Tensor((8,), T.int32), out: T.Tensor((1,), T.int32)):
    with T.Kernel(1, threads=128) as bx:
        acc = T.alloc_reducer((1,), T.int32, op="sum")
        out_frag = T.alloc_fragment((1,), T.int32)
        T.finalize_reducer(acc, out_frag)
        T.copy(out_frag, out)
