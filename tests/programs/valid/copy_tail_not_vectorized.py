# expect: ok
# input: x=arange(0, 10)
# expect: result out=[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 0.0, 0.0]]
#
# A 16-byte-aligned copy of 8 floats at 4*bx out of a 10-float tensor: block 1's second
# run of 4 (x[8..11]) straddles the tensor's end. Every element needs its border test,
# so the copy must not become float4 accesses (a test of each run's first element once
# let x[10] and x[11] be read).
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((10,), T.float32), out: T.Tensor((2, 8), T.float32)):
    with T.Kernel(2, threads=128) as bx:
        s = T.alloc_shared((8,), T.float32)
        T.copy(x[bx * 4:bx * 4 + 8], s)
        T.copy(s, out[bx, 0:8])
