"""The limits a program and its inputs must stay within (docs/limits.md lists them all).

Two kinds:
- target limits of a CUDA launch (threads per block, grid extents: the same on every
  target of spec.target, tests/test_arch.py pins it, so they are checked before a target
  is chosen): a program beyond them cannot run anywhere, so it is R506;
- limits of this tool: sizes a run of the interpreter or the simulator cannot hold or
  cannot finish (elements of one buffer, lanes of a T.Parallel, iterations), and the
  nesting depth every recursive walker of the IR is known to handle. Beyond them the
  program gets R102 (sizes) or R100 (nesting) naming the number, never a MemoryError,
  a hang or a RecursionError.
"""
from __future__ import annotations

from .target import DEFAULT_TARGET, target

# The launch limits are the target's own (spec.target holds the one table).
TARGET = DEFAULT_TARGET
MAX_THREADS_PER_BLOCK = target(TARGET).threads_per_block
MAX_GRID = target(TARGET).grid            # gridDim.x, .y, .z
GRID_AXES = ("x", "y", "z")

# Elements of what one block holds or runs at once: an on-chip buffer (fragment,
# shared, local, reducer), the lanes of one T.Parallel nest, and a given input array
# (held whole). The interpreter keeps a float64 error bound beside every value, so
# 2**26 elements of float64 are 1 GiB with their bounds.
MAX_ELEMENTS = 2**26
# Lanes of one T.Parallel nest, and cells of one layout: its elements times its replicas
# (every participant's copy: a fragment read outside T.Parallel is held by every
# thread, a reducer's storage may be, a loop that follows a replicated fragment runs
# each iteration on every replica). Layout inference, the planner and the simulator
# evaluate a layout cell by cell with numpy, and the interpreter keeps about 256 bytes
# per lane: at 2**22 a check of one T.Parallel took 21 s of CPU and 1.3 GB, at 2**20
# about 5 s and 350 MB (docs/limits.md). A reducer's elements times the kernel's
# threads are held to it in the frontend; every other layout where it is built
# (codegen.layout_rules). On the GPU 2**20 cells over 1024 threads are 1024 registers
# a thread, four times what sm_90 gives one thread.
MAX_LANES = 2**20
MAX_LAYOUT_CELLS = 2**20
# Elements of one declared T.Tensor parameter. `check` holds only the windows of the
# blocks it runs (verify.oracle.blocks) and `run` refuses what is over --max-memory before it
# starts, so the declared size only has to keep every flat index far inside int64.
MAX_TENSOR_ELEMENTS = 2**40
# Blocks one run executes: the interpreter and the simulator run each in Python (`check`
# spends about a millisecond of CPU per small block over its three runs: interpreter,
# auto and canonical plans), so 2**12 blocks answer in about 5 s of CPU (2**13 took
# 8 to 9 s: no margin for a block that does more; docs/limits.md has the measurement).
# `check` runs a sample when the blocks are proved independent; all of them otherwise.
MAX_BLOCKS = 2**12
# Runs of one loop body in one run: over the blocks it executes, the trip counts of the
# serial loops around the body (spec.run_cost evaluates a bound read from block indices
# per block before the run; interp.runs counts what is read from memory as it goes).
# `check` spends about 290 µs of CPU per run of a one-update body over its three runs,
# so 2**14 runs answer in about 5 s of CPU (2**15 took 9.3 s).
MAX_ITERATIONS = 2**14
# Trip count of one serial loop with constant bounds, and the product of those around
# one body, as the frontend lowers them: what a program may state (a size family's
# largest member lowers with its sizes, and nothing runs there). What a run executes is
# held to MAX_ITERATIONS and MAX_WORK when it starts (spec.run_cost.check_run_size) and
# as it goes (interp.runs).
MAX_TRIPS = 2**20
# Work of one run (spec.run_cost): every run of a statement is a unit, plus a unit per
# ELEMENTS_PER_WORK elements it touches (T.gemm M·N·K, a copy's or fill's region,
# T.Parallel lanes). Body runs alone let a flash attention through whose body (two
# 64×64×128 T.gemm, a dozen T.Parallel) costs about 65 ms of the interpreter a run: its
# causal form at seq_len 4096 (66 560 runs, bounds read from bx) took 69 minutes of
# `emit`, at seq_len 512 (1 152 runs) 75 s. Measured on the development machine (2
# shared cores): the interpreter spends about 42 µs per statement run of a one-update
# body and 66 ns per element of the attention body (8.8 million in 0.59 s); the
# simulator about 100 µs per statement run and 11 ns per element. `check` runs the
# interpreter and one or two simulations, about 240 µs per statement run and 90 ns per
# element: 4096 elements cost about what a statement run does (1.5× over it), so a unit
# is about 240 µs of `check`, and 2**16 units about 16 s at most, 3 to 18 s of the
# interpreter alone (`emit`'s gate, `run`). Measured at the limit: the attention's
# check at seq_len 4096 (a sample of 4 blocks, 37 280 units) 9.6 s; emit of
# upstream gemv_splitk_vectorized (59 392 units, SIMT statements over thread-private
# buffers) 12.9 s. A tighter 2**15 would refuse both (they finish in seconds today, the
# nightly upstream test runs the latter); every program of tests/ and examples/ stays
# under 2**16 (the most: 59 392 for a whole grid, 12 380 for a `check`).
ELEMENTS_PER_WORK = 4096
MAX_WORK = 2**16

# num_stages of one T.Pipelined loop. Each stage is a copy of every tile the loop stages
# (at least one 16-byte cp.async), and sm_90 gives a block at most 227 KB of shared memory:
# no pipeline past about 14,000 stages could be launched, and TileLang's own kernels use
# 1 to 4. Past this the frontend answers R102 naming the number (a num_stages of 1e308
# reached the resource model as a 1000-digit byte count; issue 24's campaign).
MAX_STAGES = 2**10

# Assignments of the context variables (block indices, serial loop variables) of one
# fragment access that layout inference enumerates to decide it exactly
# (codegen.layout_rules: each one evaluates the whole loop). Past it the access is an
# R300 saying so: a fragment indexed by a block index over a large grid, or by a serial
# loop variable over thousands of rows, would otherwise cost a pass per value.
MAX_LAYOUT_CONTEXTS = 2**14

# Nesting depth of one expression (every IR walker recurses on it, a few Python frames
# per level) and of statements (bodies of loops, ifs and T.ws inside each other). Python
# already refuses 100 levels of indentation; the product of both stays far below its
# recursion limit in every walker (tests/test_limits.py runs the deepest accepted
# program through every stage).
MAX_EXPR_DEPTH = 64
MAX_STMT_DEPTH = 32


def power_of_two(n: int) -> str:
    """`67108864 (2**26)` for a limit in messages."""
    exponent = n.bit_length() - 1
    return f"{n} (2**{exponent})" if n == 1 << exponent else str(n)
