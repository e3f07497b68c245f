# expect: ok
# input: A=arange(0, 64)
# expect: result B=[28.0, 92.0, 156.0, 220.0, 284.0, 348.0, 412.0, 476.0]
#
# TVM's `DataType(dtype).bits`, which upstream's GEMV factories size their vector
# tiles with: DataType(float16).bits is 16, so TILE = 128 // 16 = 8 elements a row.
import tilelang.language as T
from tvm import DataType

dtype = T.float16
TILE = 128 // DataType(dtype).bits
ROWS = 8


@T.prim_func
def main(A: T.Tensor((ROWS, TILE), dtype), B: T.Tensor((ROWS,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        a = T.alloc_fragment((ROWS, TILE), T.float32)
        b = T.alloc_fragment((ROWS,), T.float32)
        T.copy(A, a)
        T.reduce_sum(a, b, dim=1)
        T.copy(b, B)
