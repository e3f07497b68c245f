# expect: error R102 at 8:70
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        acc = T.alloc_reducer((1,), T.float32, op="sum", replication="some")
