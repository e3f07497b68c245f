# expect: ok
# input: x=arange(0, 120)
# expect: result out=[7140.0]
#
# Every sequential loop kind carries updates across iterations of one epoch: T.serial
# with a start and stop, Python range and T.unroll cover x[0:40]; a T.Pipelined loop with
# a T.ceildiv trip count covers the other 80 values in tiles of 32 (the last tile is
# guarded: 16 of its 32 iterations contribute).
import tilelang.language as T

N = 120
TILE = 32


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=64) as bx:
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for a in T.serial(0, 2):
            for b in range(2):
                for c in T.unroll(2):
                    for j in T.Parallel(5):
                        T.reducer_update(acc[0], x[a * 20 + b * 10 + c * 5 + j])
        for t in T.Pipelined(T.ceildiv(N - 40, TILE), num_stages=2):
            for j in T.Parallel(TILE):
                if 40 + t * TILE + j < N:
                    T.reducer_update(acc[0], x[40 + t * TILE + j])
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, out)
