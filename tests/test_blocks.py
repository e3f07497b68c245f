"""Blocks as the unit of dynamic checking (verify.oracle.blocks): the independence proof, the
block classes, the sample, the per-block windows (a windowed run equals the whole run
on the elements it writes), counter-based inputs, the memory estimate and its refusal."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.spec.dtypes import DTYPES
from verify_reducer.spec.ir import Buffer
from verify_reducer.interp import logical
from verify_reducer.interp.memory import Window
from verify_reducer.interp.simulate import simulate
from verify_reducer.verify.oracle import blocks
from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.cli.commands import _progress, main
from verify_reducer.verify.oracle.cost import estimate, parse_size
from verify_reducer.verify.oracle.expect import parse_expectation
from verify_reducer.verify.oracle.inputs import generate, in_windows

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
VALID = sorted((ROOT / "tests" / "programs" / "valid").glob("*.py"))


def write(tmp_path, text: str, name: str = "prog.py") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def func_of(path) -> object:
    return pipeline.load(str(path)).func


def cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# A GEMV whose M does not divide into BLOCK_M: the last block's copies are clipped, and
# a condition on the block index holds for the first two blocks only.
TAIL = """\
import tilelang.language as T

M = 100
K = 64
BLOCK_M = 32


@T.prim_func
def main(A: T.Tensor((M, K), T.float32), x: T.Tensor((K,), T.float32),
         y: T.Tensor((M,), T.float32)):
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=128) as bx:
        A_frag = T.alloc_fragment((BLOCK_M, K), T.float32)
        x_frag = T.alloc_fragment((K,), T.float32)
        T.copy(A[bx * BLOCK_M, 0], A_frag)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((BLOCK_M,), T.float32, op="sum")
        T.reducer_init(acc)
        for i, k in T.Parallel(BLOCK_M, K):
            T.reducer_update(acc[i], A_frag[i, k] * x_frag[k])
        y_frag = T.alloc_fragment((BLOCK_M,), T.float32)
        T.finalize_reducer(acc, y_frag)
        if bx < 2:
            T.copy(y_frag, y[bx * BLOCK_M])
        else:
            for i in T.Parallel(BLOCK_M):
                if bx * BLOCK_M + i < M:
                    y[bx * BLOCK_M + i] = y_frag[i] * 2.0
"""

# Every block writes out[0]: the blocks are not independent.
SAME_OUTPUT = """\
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8, 16), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(8, threads=32) as bx:
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for k in T.Parallel(16):
            T.reducer_update(acc[0], x[bx, k])
        r = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, r)
        out[0] = r[0]
"""


# ----------------------------------------------------------------------------- independence

@pytest.mark.parametrize("name", ["gemv_pipelined.py", "gemv_nondividing.py"])
def test_independence_proved_for_the_gemvs(name):
    func = func_of(ROOT / "examples" / name)
    found = blocks.prove_independent(func, blocks.global_accesses(func))
    assert found.proved and found.queries >= 1 and found.reason is None


def test_a_loop_variable_only_a_guard_mentions_keeps_its_range():
    """Regression: `if i < k` with k in 0..63 keeps each block's writes in its own 64
    elements; encoding the guard after copying the variables' ranges lost k's, and block
    0 seemed to reach y[64]."""
    func = func_of(ROOT / "tests" / "programs" / "valid" / "guard_only_loop_var_blocks.py")
    found = blocks.prove_independent(func, blocks.global_accesses(func))
    assert found.proved and found.reason is None


def test_one_output_written_by_every_block_is_a_race(tmp_path):
    """Every block stores its own sum into out[0]: which one remains depends on which
    block runs last. Z3's model is a witness (every index is the expression itself), so
    check rejects it before anything runs (the blocks used to run in order, last wins)."""
    path = write(tmp_path, SAME_OUTPUT)
    selection = blocks.select(func_of(path))
    assert not selection.independence.proved
    assert selection.independence.reason == (
        "the write of out at line 13 and the write of out at line 13 both reach out[0] "
        "in block (0,) and block (1,)")
    report = pipeline.check(path)
    assert report.exit_code == 1 and report.reference is None
    (race,) = [d for d in report.diagnostics if d.is_error]
    assert (race.code, race.span.line) == ("R504", 13)
    assert race.message.endswith("which value remains depends on which block runs last "
                                 "(blocks of one launch run in no order)")


def test_a_read_modify_write_from_several_blocks_is_a_race(tmp_path):
    rmw = SAME_OUTPUT.replace("out[0] = r[0]", "out[0] = out[0] + r[0]")
    report = pipeline.check(write(tmp_path, rmw))
    (race,) = [d for d in report.diagnostics if d.is_error]
    assert race.code == "R504" and "a read-modify-write from several blocks: both " \
        "blocks can read the element before either stores it, and one update is lost" \
        in race.message
    assert not race.notes                 # the read is inside the store it races with


# Every block stores into out[perm[bx]]: a permutation keeps the blocks apart, but the
# index is a loaded value, so Z3's model leans on a stand-in: no witness, no proof.
PERMUTED = "# input: perm=[3, 1, 4, 0, 7, 5, 2, 6]\n" + SAME_OUTPUT.replace(
    "out: T.Tensor((1,), T.float32)):",
    "perm: T.Tensor((8,), T.int32), out: T.Tensor((8,), T.float32)):").replace(
    "out[0] = r[0]", "out[perm[bx]] = r[0]")


def test_a_loaded_index_is_not_proved_independent_and_every_block_runs(tmp_path):
    path = write(tmp_path, PERMUTED)
    selection = blocks.select(func_of(path))
    assert not selection.independence.proved
    assert selection.blocks is None and selection.why_all == "independence not proved"
    report = pipeline.check(path)
    assert report.exit_code == 0
    assert len(report.reference.epochs) == 8          # every block ran
    assert report.reference.outputs["out"].shape == (8,)


def test_a_block_reading_what_another_writes_is_not_independent(tmp_path):
    shifted = SAME_OUTPUT.replace("(1,), T.float32)):", "(9,), T.float32)):").replace(
        "out[0] = r[0]", "out[bx + 1] = r[0] + out[bx]")
    func = func_of(write(tmp_path, shifted))
    found = blocks.prove_independent(func, blocks.global_accesses(func))
    assert not found.proved
    assert "the write of out" in found.reason and "the read of out" in found.reason


def test_blocks_that_meet_in_the_run_are_a_race(tmp_path):
    """perm is not a permutation here (two blocks store out[3]): nothing could be proved
    before the run, and the run, every block in turn, meets the second store (R504,
    interp/block_order.py), naming both blocks and both statements."""
    path = write(tmp_path, PERMUTED.replace("2, 6]", "2, 3]"))
    report = pipeline.check(path)
    (race,) = [d for d in report.diagnostics if d.is_error]
    assert race.code == "R504" and race.message.startswith(
        "race between blocks, met in this run: block 7 stores out[3], which block 0 "
        "stored at line 14")
    assert race.notes[0].message == "where block 0 stored it"


def test_not_proved_is_reported(tmp_path, capsys):
    code, out, _ = cli(capsys, "check", write(tmp_path, PERMUTED))
    assert code == 0
    assert "blocks         all 8; independence NOT proved: the write of out" in out
    code, out, _ = cli(capsys, "check", write(tmp_path, PERMUTED), "--json")
    doc = json.loads(out)
    assert doc["blocks"]["all"] and not doc["blocks"]["independence"]["proved"]


# ----------------------------------------------------------------------------- classes

def test_classes_of_a_non_dividing_tail(tmp_path):
    func = func_of(write(tmp_path, TAIL))
    classes = blocks.block_classes(func, blocks.global_accesses(func))
    assert [(c.first, c.size) for c in classes] == [((0,), 2), ((2,), 1), ((3,), 1)]
    assert any("`bx < 2` (line 22) always holds" == t for t in classes[0].traits)
    assert any("`bx < 2` (line 22) never holds" == t for t in classes[1].traits)
    tail = classes[2].traits
    assert "the read of A at line 14 clipped in dimension 0 (high border)" in tail
    assert "`bx * 32 + i < 100` (line 26) holds for some iterations" in tail
    assert "`bx * 32 + i < 100` (line 26) always holds" in classes[1].traits


def _classes_of_tall_tail(tmp_path, m: str):
    """(blocks along the grid, block classes) of TAIL with M = m rows and K = 4."""
    source = TAIL.replace("M = 100", f"M = {m}").replace("K = 64", "K = 4")
    func = func_of(write(tmp_path, source))
    return func.kernel.grid[0], blocks.block_classes(func, blocks.global_accesses(func))


def test_classes_of_a_grid_too_large_to_enumerate(tmp_path):
    grid, classes = _classes_of_tall_tail(tmp_path, "10000000 - 5")
    assert grid > blocks.FULL_GRID_LIMIT
    assert [c.first for c in classes] == [(0,), (2,), (grid - 1,)]
    assert any("high border" in t for t in classes[-1].traits)


def test_a_dimension_past_the_limit_is_classified_from_a_stated_sample(tmp_path):
    """A grid dimension longer than DIM_LIMIT is never enumerated (memory would follow
    the grid): its ends, an evenly spaced sample and the bisected first block after each
    change stand in, which still finds the middle class and the tail, and each class
    carries the note that says how it was found."""
    grid, classes = _classes_of_tall_tail(tmp_path, "400000000 - 5")
    assert grid > blocks.DIM_LIMIT
    assert [c.first for c in classes] == [(0,), (2,), (grid - 1,)]
    assert all(c.note and "classified from both ends" in c.note for c in classes)


def test_the_sample_is_the_classes_first_last_and_seeded_random(tmp_path):
    many = TAIL.replace("M = 100", "M = 1000")           # 32 blocks, last one a tail
    func = func_of(write(tmp_path, many))
    default = blocks.select(func)
    assert len(default.sampled) == blocks.DEFAULT_SAMPLE
    assert {(0,), (2,), (31,)} <= set(default.blocks)
    assert set(default.sampled).isdisjoint({(0,), (2,), (31,)})
    assert blocks.select(func, None, seed=0).blocks == default.blocks
    assert blocks.select(func, None, seed=1).sampled != default.sampled
    assert blocks.select(func, 0).blocks == [(0,), (2,), (31,)]
    assert len(blocks.select(func, 5).sampled) == 5
    assert blocks.select(func, "all").blocks is None
    assert blocks.select(func, 40).blocks is None         # the sample would cover it


# ----------------------------------------------------------------------------- windows

def test_windows_are_the_footprint_boxes(tmp_path):
    func = func_of(write(tmp_path, TAIL))
    accesses = blocks.global_accesses(func)
    first = blocks.windows(func, accesses, (0,))
    assert first["A"].box == ((0, 32), (0, 64)) and first["x"].box == ((0, 64),)
    assert first["y"].box == ((0, 32),)
    tail = blocks.windows(func, accesses, (3,))
    assert tail["A"].box == ((96, 100), (0, 64)) and tail["y"].box == ((96, 100),)


def _programs():
    for path in EXAMPLES + VALID:
        expected = parse_expectation(path.read_text(), str(path))
        if not expected.errors:
            yield pytest.param(path, id=str(path.relative_to(ROOT)))


@pytest.mark.parametrize("path", list(_programs()))
def test_windowed_blocks_equal_the_whole_run(path):
    """Each block alone against its windows computes, on every element it writes, what
    the whole run computes there (interpreter and simulated plan)."""
    windowed_equals_whole(path)


# Tiles over both dimensions of A, neither dividing: a tail tile's guarded lanes have
# positions past the end of a row, outside the block's window of A.
TILES_2D = """import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((40, 36), T.float32), out: T.Tensor((40, 3), T.float32)):
    with T.Kernel(3, 3, threads=64) as (bx, by):
        tile = T.alloc_shared((16, 16), T.float32)
        T.copy(A[by * 16, bx * 16], tile)
        frag = T.alloc_fragment((16, 16), T.float32)
        T.copy(tile, frag)
        acc = T.alloc_reducer((16,), T.float32, op="sum")
        T.reducer_init(acc)
        for i, j in T.Parallel(16, 16):
            T.reducer_update(acc[i], frag[i, j])
        row = T.alloc_fragment((16,), T.float32)
        T.finalize_reducer(acc, row)
        for i in T.Parallel(16):
            if by * 16 + i < 40:
                out[by * 16 + i, bx] = row[i]
"""


def test_windowed_tail_tiles_in_two_dimensions_equal_the_whole_run(tmp_path):
    path = write(tmp_path, TILES_2D)
    windows = blocks.windows(func_of(path), blocks.global_accesses(func_of(path)), (2, 2))
    assert windows["A"].box == ((32, 40), (32, 36))
    windowed_equals_whole(path)


# A gather: which x a block reads depends on data, so its window of x is all of x.
GATHER = """\
import tilelang.language as T


@T.prim_func
def main(idx: T.Tensor((16,), T.int32), x: T.Tensor((8,), T.float32),
         out: T.Tensor((16,), T.float32)):
    with T.Kernel(4, threads=32) as bx:
        acc = T.alloc_reducer((4,), T.float32, op="sum")
        T.reducer_init(acc)
        for i, k in T.Parallel(4, 2):
            T.reducer_update(acc[i], x[(idx[bx * 4 + i] + 8 + k) % 8] * 2.0)
        r = T.alloc_fragment((4,), T.float32)
        T.finalize_reducer(acc, r)
        for i in T.Parallel(4):
            out[bx * 4 + i] = r[i]
"""


def test_a_data_dependent_index_windows_the_whole_dimension(tmp_path):
    path = write(tmp_path, GATHER)
    func = func_of(path)
    accesses = blocks.global_accesses(func)
    assert blocks.prove_independent(func, accesses).proved
    windows = blocks.windows(func, accesses, (1,))
    assert windows["x"].box == ((0, 8),) and windows["idx"].box == ((4, 8),)
    assert windows["out"].box == ((4, 8),)
    windowed_equals_whole(path)


def windowed_equals_whole(path):
    loaded = pipeline.load(str(path))
    func = loaded.func
    accesses = blocks.global_accesses(func)
    independence = blocks.prove_independent(func, accesses)
    if not independence.proved:
        pytest.skip("blocks not proved independent: never run windowed")
    # tensors blocks meet in through atomics: each block's contributions, together, are
    # what the whole run added (checked after the loop)
    atomic = {name: _atomic_op(func, name) for name in independence.commuting}
    values = loaded.inputs(0)
    plan = pipeline.make_plan(loaded, "auto")
    whole = logical.run(func, values)
    whole_sim = simulate(plan, values).outputs
    given = loaded.given()
    written = {p.name: np.zeros(p.shape, dtype=bool) for p in func.params}
    combined: dict[str, np.ndarray] = {}
    for block in np.ndindex(*func.kernel.grid):
        windows = blocks.windows(func, accesses, block)
        boxes = {n: w.box for n, w in windows.items()}
        part = in_windows(func, 0, given, boxes)
        for name, box in boxes.items():     # the windowed inputs are the whole's slices
            cut = tuple(slice(lo, hi) for lo, hi in box)
            assert np.array_equal(part[name], values[name][cut])
        alone = logical.run(func, part, [block], windows)
        sim = simulate(plan, part, [block], windows)
        for name, box in boxes.items():
            cut = tuple(slice(lo, hi) for lo, hi in box)
            mask = alone.written[name]
            assert np.array_equal(mask, sim.written[name])
            if name in atomic:
                # the simulated block's contributions are the interpreter's (a float
                # sum's within the interpreter's bound: the order is the hardware's)
                got, want = sim.outputs[name][mask], alone.outputs[name][mask]
                if atomic[name] == "sum" and want.dtype.kind == "f":
                    assert (np.abs(got.astype(np.float64) - want) <=
                            alone.bounds[name][mask]).all()
                else:
                    assert np.array_equal(got, want)
                _gather(atomic[name], combined, name, values[name], cut, mask,
                        alone.outputs[name])
                written[name][cut] |= mask
                continue
            # (a NaN output, as inf + -inf gives, is the same answer on both sides)
            assert np.array_equal(alone.outputs[name][mask], whole.outputs[name][cut][mask],
                                  equal_nan=True)
            assert np.array_equal(alone.bounds[name][mask], whole.bounds[name][cut][mask],
                                  equal_nan=True)
            assert np.array_equal(sim.outputs[name][mask], whole_sim[name][cut][mask],
                                  equal_nan=True)
            written[name][cut] |= mask
    for p in func.params:                   # together the blocks wrote what changed
        changed = whole.outputs[p.name] != values[p.name]
        assert not (changed & ~written[p.name]).any()
    for name, op in atomic.items():
        expected, total = whole.outputs[name], combined.get(name, values[name])
        if op == "sum" and expected.dtype.kind == "f":
            # float sums in another order: within the whole run's rigorous bound
            assert (np.abs(total - expected) <= whole.bounds[name] * 2 + 1e-6).all()
        else:
            assert np.array_equal(total.astype(expected.dtype), expected)


def _atomic_op(func, name: str) -> str:
    """The monoid of the atomic updates of the tensor called name."""
    from verify_reducer.spec import ir
    from verify_reducer.verify.epochs.scopes import statements
    (op,) = {s.op for s, _ in statements(func.kernel)
             if isinstance(s, ir.AtomicUpdate) and s.buffer.name == name}
    return op


def _gather(op: str, combined: dict, name: str, initial, cut, mask, alone) -> None:
    """One block's contributions (its result where it wrote, against the initial
    tensor) into combined[name]: sums add their deltas (in float64 or int64), max/min
    take the extremum."""
    if name not in combined:
        combined[name] = initial.astype(np.float64 if initial.dtype.kind == "f"
                                        else np.int64)
    target = combined[name][cut]
    if op == "sum":
        target[mask] += alone[mask].astype(target.dtype) - initial[cut][mask]
    else:
        pick = np.maximum if op == "max" else np.minimum
        target[mask] = pick(target[mask], alone[mask])
    combined[name][cut] = target


def test_a_sampled_check_compares_what_its_blocks_write(tmp_path, capsys):
    path = write(tmp_path, TAIL.replace("M = 100", "M = 1000"))
    report = pipeline.check(path)
    sel = report.selection
    assert sel.blocks is not None and report.exit_code == 0
    ys = {c.name: c for c in report.comparisons["sim/auto"]}
    expected = sum(min(32, 1000 - 32 * b[0]) for b in sel.blocks)
    assert ys["y"].compared == expected and ys["A"].compared == 0
    assert len(report.reference.epochs) == len(sel.blocks)
    code, out, _ = cli(capsys, "check", path)
    assert code == 0
    assert f"blocks         {len(sel.blocks)} of 32: (0,), " in out
    assert "random sample (seed 0): " in out
    assert f"compared y: {expected} of 1000 elements" in out
    code, out, _ = cli(capsys, "check", path, "--json", "--blocks", "1")
    doc = json.loads(out)
    assert len(doc["blocks"]["sampled"]) == 1 and len(doc["blocks"]["ran"]) == 4
    assert [c["first"] for c in doc["blocks"]["classes"]] == [[0], [2], [31]]
    assert doc["comparisons"]["sim/auto"][2]["compared"] == 32 * 3 + 8
    code, out, _ = cli(capsys, "check", path, "--json", "--blocks", "all")
    doc = json.loads(out)
    assert doc["blocks"]["all"] and doc["blocks"]["why_all"] == "--blocks all"
    assert doc["comparisons"]["sim/auto"][2]["compared"] == 1000


def test_a_windowed_mismatch_names_the_tensor_index(tmp_path):
    func = func_of(write(tmp_path, TAIL))
    windows = blocks.windows(func, blocks.global_accesses(func), (3,))
    y = np.zeros(4, dtype=np.float32)
    reference = logical.Result({"y": y}, {"y": np.zeros(4)}, [],
                               {"y": np.array([True, True, False, False])})
    got = y.copy()
    got[1] = 5.0
    [found] = pipeline.compare_outputs({"y": got}, reference,
                                       {"y": np.zeros(4, dtype=bool)}, windows)
    assert not found.ok and found.first_index == (97,) and found.compared == 2


def test_a_position_outside_the_window_is_our_bug():
    buffer = Buffer("A", (10, 6), DTYPES["float32"], "global", None)
    window = Window(buffer, ((2, 4), (0, 6)))
    assert window.local(np.array([12, 23])).tolist() == [0, 11]
    with pytest.raises(RuntimeError, match="outside the window"):
        window.local(np.array([24]))
    narrow = Window(buffer, ((2, 4), (1, 3)))
    assert narrow.local(np.array([13, 20])).tolist() == [0, 3]
    with pytest.raises(RuntimeError, match="outside the window"):
        narrow.local(np.array([12]))


# ----------------------------------------------------------------------------- inputs

@pytest.mark.parametrize("dtype, lo, hi", [("float16", -1, 1), ("float32", -1, 1),
                                           ("int32", -8, 7), ("uint8", 0, 15),
                                           ("bool", 0, 1)])
def test_generated_inputs_are_the_same_in_any_window(dtype, lo, hi):
    buffer = Buffer("A", (7, 5, 3), DTYPES[dtype], "global", None)
    whole = generate(buffer, 3)
    assert whole.shape == (7, 5, 3) and whole.dtype == DTYPES[dtype].np
    assert lo <= whole.min() and whole.max() <= hi and len(np.unique(whole)) > 1
    box = ((2, 6), (1, 4), (0, 3))
    assert np.array_equal(generate(buffer, 3, box), whole[2:6, 1:4, 0:3])
    assert not np.array_equal(generate(buffer, 4), whole)


def test_generated_inputs_depend_on_the_name_not_the_order():
    a = Buffer("a", (64,), DTYPES["float32"], "global", None)
    b = Buffer("b", (64,), DTYPES["float32"], "global", None)
    assert not np.array_equal(generate(a, 0), generate(b, 0))
    assert np.array_equal(generate(a, 0), generate(a, 0))
    assert -1.0 <= generate(a, 0).min() and generate(a, 0).max() < 1.0


def test_given_inputs_are_sliced_to_the_window(tmp_path):
    func = func_of(write(tmp_path, TAIL))
    x = np.arange(64, dtype=np.float32)
    values = in_windows(func, 0, {"x": x}, {"A": ((96, 100), (0, 64)), "x": ((8, 16),),
                                            "y": ((0, 0),)})
    assert values["x"].tolist() == list(range(8, 16))
    assert values["A"].shape == (4, 64) and values["y"].shape == (0,)


# ----------------------------------------------------------------------------- memory

def test_sizes_parse():
    assert parse_size("512M") == 512 << 20 and parse_size("4G") == 4 << 30
    assert parse_size("1.5g") == 3 << 29 and parse_size("1000") == 1000
    assert parse_size("2GiB") == 2 << 30
    for bad in ("", "G", "-1M", "lots"):
        with pytest.raises(ValueError):
            parse_size(bad)


def test_the_estimate_follows_the_windows(tmp_path):
    func = func_of(write(tmp_path, TAIL.replace("M = 100", "M = 100000")))
    whole = estimate(func)
    one = estimate(func, [blocks.windows(func, blocks.global_accesses(func), (0,))])
    assert whole.data > 1000 * one.data and whole.working == one.working
    assert whole.data >= 100000 * 64 * 4


def test_run_over_max_memory_is_refused_before_it_starts(tmp_path, capsys):
    path = write(tmp_path, TAIL)
    code, out, err = cli(capsys, "run", path, "--max-memory", "1K")
    assert code == 2 and out == ""
    assert "over --max-memory 1.0 KiB; raise --max-memory" in err
    code, out, _ = cli(capsys, "run", path, "--max-memory", "1K", "--json")
    assert code == 2 and "this run would need about" in json.loads(out)["error"]
    assert "use `check`, which runs a sample of the blocks" in err
    code, _, err = cli(capsys, "check", path, "--max-memory", "1K", "--blocks", "all")
    assert code == 2 and "drop --blocks all" in err
    code, _, err = cli(capsys, "check", write(tmp_path, PERMUTED), "--max-memory", "1K")
    assert code == 2 and err.rstrip().endswith("raise --max-memory")
    for argv, message in ((("run", path, "--max-memory", "lots"), "a size like 512M"),
                          (("check", path, "--blocks", "some"), "all or a count")):
        with pytest.raises(SystemExit) as exited:
            main(list(argv))
        assert exited.value.code == 2 and message in capsys.readouterr().err


def test_run_reports_progress_per_block(tmp_path):
    loaded = pipeline.load(write(tmp_path, TAIL))
    seen = []
    pipeline.run_backend(loaded, "sim", loaded.inputs(0), "auto",
                         lambda done, total: seen.append((done, total)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    seen.clear()
    pipeline.run_backend(loaded, "interp", loaded.inputs(0), "auto",
                         lambda done, total: seen.append((done, total)))
    assert seen[-1] == (4, 4)


def test_progress_lines_on_stderr(capsys):
    show = _progress("sim", lines=2)
    for done in range(1, 5):
        show(done, 4)
    err = capsys.readouterr().err
    assert err == "\rsim: block 2 of 4\rsim: block 4 of 4\n"


def test_blocks_run_side_by_side_give_the_serial_answer(monkeypatch):
    """Large windows run in forked workers (verify.oracle.pipeline._map_blocks); the report is
    the one the serial loop gives: the same blocks, comparisons, epochs and verdict."""
    from verify_reducer.verify.oracle import pipeline
    path = str(ROOT / "examples" / "gemv_nondividing.py")
    serial = pipeline.check(path)
    monkeypatch.setattr(pipeline, "PARALLEL_ELEMENTS", 0)
    parallel = pipeline.check(path)
    assert parallel.verdict == serial.verdict == "verified"
    assert parallel.selection.blocks == serial.selection.blocks
    assert parallel.comparisons == serial.comparisons
    assert [(e.block, e.counts.tolist()) for e in parallel.reference.epochs] == \
        [(e.block, e.counts.tolist()) for e in serial.reference.epochs]


# Row tiles × K slices adding into Out atomically, rows past 10 guarded: the sampled
# blocks of one row tile compare the same elements of Out (the fuzzer's split-K family
# found the count reading "16 of 10 elements").
SPLIT_ROWS = """\
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((10, 24), T.float32), Out: T.Tensor((10,), T.float32)):
    with T.Kernel(3, 3, threads=128) as (bx, by):
        acc = T.alloc_reducer((4,), T.float32, op="sum")
        T.reducer_init(acc)
        for i, k in T.Parallel(4, 8):
            if bx * 4 + i < 10:
                T.reducer_update(acc[i], A[bx * 4 + i, by * 8 + k])
        res = T.alloc_fragment((4,), T.float32)
        T.finalize_reducer(acc, res)
        for i in T.Parallel(4):
            if bx * 4 + i < 10:
                T.atomic_add(Out[bx * 4 + i], res[i])
"""


def test_an_atomic_destination_counts_block_results_not_elements(tmp_path, capsys):
    code, out, _ = cli(capsys, "check", write(tmp_path, SPLIT_ROWS), "--no-cache")
    assert code == 0
    assert "independence proved up to the order of atomic updates of Out" in out
    assert "compared Out: 16 (block, element) results of the sampled blocks' " \
        "contributions, 10 elements" in out


def test_atomics_of_two_monoids_into_one_element_from_two_blocks_race(tmp_path):
    """An add and a max of out[0] from every block: each update is indivisible, but the
    two do not commute, so out[0] ends as the blocks happen to run (R504 before any
    run); into different elements they are independent."""
    both = SPLIT_ROWS.replace("Out: T.Tensor((10,), T.float32)", "Out: T.Tensor((11,), T.float32)") \
        .replace("                T.atomic_add(Out[bx * 4 + i], res[i])",
                 "                T.atomic_add(Out[bx * 4 + i], res[i])\n"
                 "                T.atomic_max(Out[{}], res[i])")
    report = pipeline.check(write(tmp_path, both.format("bx * 4 + i")))
    (race,) = [d for d in report.diagnostics if d.is_error]
    assert race.code == "R504" and race.span.line == 17 and \
        "atomic updates of Out by max and by sum do not commute" in race.message
    assert race.notes[0].span.line == 16
    report = pipeline.check(write(tmp_path, both.format("10")))
    assert report.exit_code == 0, [d.message for d in report.diagnostics]
