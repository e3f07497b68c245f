"""Witness inputs (verify.oracle.witness): every contribution visible in the exact result. The
drop-one backends of the GEMV pass the error bound on uniform random inputs and are
caught exactly on witness inputs (and on seeded ones: float16 inputs are generated
dyadic, so their sums are exact too); the audit says what each example's witness guarantees, and
the simulator reproduces the witness results bit for bit."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from verify_reducer.verify.oracle import inputs as inputs_mod
from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.oracle.witness import roles, witness
from verify_reducer import oracle

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
GEMV = str(ROOT / "examples" / "gemv_pipelined.py")


def _contributions(inputs):
    """GEMV's contributions A[i, k] * x[k], exact in float64."""
    return inputs["A"].astype(np.float64) * inputs["x"].astype(np.float64)


def drop_smallest_per_row(program, inputs):
    """A wrong GEMV: each row loses its contribution of least magnitude."""
    c = _contributions(inputs)
    lost = np.argmin(np.abs(c), axis=1)
    y = c.sum(axis=1) - c[np.arange(c.shape[0]), lost]
    return {"y": y.astype(np.float32)}


def uniform_inputs(seed: int = 0) -> dict[str, np.ndarray]:
    """GEMV inputs uniform in [-1, 1) (what seeded float32 inputs are): sums that round,
    a bound near 4e-3 per row."""
    rng = np.random.default_rng(seed)
    return {name: rng.uniform(-1, 1, shape)
            for name, (shape, _) in oracle.load(GEMV).params.items() if name != "y"}


def drop_one(row: int, col: int):
    def backend(program, inputs):
        c = _contributions(inputs)
        c[row, col] = 0.0
        return {"y": c.sum(axis=1).astype(np.float32)}
    return backend


def duplicate_one(row: int, col: int):
    def backend(program, inputs):
        c = _contributions(inputs)
        c[row, col] *= 2
        return {"y": c.sum(axis=1).astype(np.float32)}
    return backend


def test_dropping_the_smallest_contribution_passes_the_bound_on_uniform_inputs():
    report = oracle.check(GEMV, drop_smallest_per_row, uniform_inputs(), fill="seeded")
    assert report.ok, str(report)
    y = report.tensor("y")
    assert y.status == "within_bound" and y.mismatches == 0


def test_seeded_float16_inputs_sum_exactly_and_catch_the_dropped_contribution():
    """Issue 24: seeded narrow-float inputs are ±1/2, ±1, so the GEMV's sums are exact in
    every order (bound 0) and the lost contribution is an exact mismatch."""
    ref = oracle.reference(GEMV, "seeded")
    assert set(np.unique(np.abs(ref.inputs["x"]))) <= {0.5, 1.0}
    assert not np.any(ref.bounds["y"])
    report = oracle.check(GEMV, drop_smallest_per_row, "seeded")
    assert report.verdict == "mismatch" and report.tensor("y").mismatches == 128


def test_dropping_the_smallest_contribution_is_an_exact_mismatch_on_witness_inputs():
    report = oracle.check(GEMV, drop_smallest_per_row)
    assert not report.ok and report.inputs_kind == "witness"
    y = report.tensor("y")
    assert y.status == "mismatch" and y.mismatches == 128      # every row
    assert all(m.bound == 0 and m.error >= 1 for m in y.listed)
    assert "MISMATCH" in str(report) and "exact expected" in str(report)


@pytest.mark.parametrize("row, col", [(0, 0), (37, 200), (127, 511)])
def test_one_dropped_contribution_is_caught_and_its_value_is_the_difference(row, col):
    ins = oracle.witness_inputs(GEMV)
    value = _contributions(ins)[row, col]
    report = oracle.check(GEMV, drop_one(row, col))
    y = report.tensor("y")
    assert y.mismatches == 1 and y.mismatch_indices.tolist() == [[row]]
    (m,) = y.listed
    assert m.expected - m.got == value and value >= 1
    # the contributions of a row are distinct: the difference names the dropped one
    row_values = _contributions(ins)[row]
    assert np.count_nonzero(row_values == value) == 1

    # on uniform inputs, losing the row's smallest contribution hides inside the bound
    uniform = oracle.reference(GEMV, uniform_inputs(), fill="seeded").inputs
    small = int(np.argmin(np.abs(_contributions(uniform)[row])))
    assert oracle.check(GEMV, drop_one(row, small), uniform).ok
    assert oracle.check(GEMV, drop_one(row, small)).tensor("y").mismatches == 1


def test_one_duplicated_contribution_is_caught():
    report = oracle.check(GEMV, duplicate_one(5, 9))
    assert report.tensor("y").mismatch_indices.tolist() == [[5]]


def test_the_gemv_witness_is_odd_times_powers_of_two_and_exact_in_every_order():
    w = oracle.witness(GEMV)
    a, x = w.inputs["A"].astype(np.int64), w.inputs["x"].astype(np.int64)
    assert (a % 2 == 1).all() and a.min() >= 1 and a.max() <= 2047     # exact in fp16
    assert set(x.tolist()) <= {1, 2, 4, 8}
    for row in _contributions(w.inputs):
        assert len(np.unique(row)) == row.size                     # distinct per row
        assert row.sum() <= 2 ** 24                                # exact in float32
    (acc,) = w.reducers
    assert acc.exact and acc.distinct and acc.contributions == 128 * 512
    assert acc.dropped_visible == acc.duplicated_visible == acc.contributions
    ref = oracle.reference(GEMV)
    assert ref.exact and not ref.bounds["y"].any()


def test_rows_of_the_gemv_witness_differ():
    ref = oracle.reference(GEMV)
    assert len(np.unique(ref.outputs["y"])) == 128


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_witness_fits_its_dtypes_and_the_simulator_reproduces_it(path):
    loaded = pipeline.load(str(path))
    w = witness(loaded)
    assert w.audited and w.reducers
    # every value is representable in its parameter's dtype (conform refuses others)
    inputs_mod.conform_given(loaded.func, w.inputs)
    report = oracle.check(str(path), oracle.backend("sim:auto"))
    assert report.ok, str(report)
    if all(audit.exact for audit in w.reducers):
        # exact outputs leave no room: the simulator's own order gave the same bits
        assert all(t.status == "exact" for t in report.tensors if t.output), str(report)


@pytest.mark.parametrize("name", ["minimal_v2", "minimal_legacy", "reducer_2d",
                                  "serial_epochs", "two_sites_8_16", "warp_group",
                                  "seeded_init", "int_wrap", "predicated_update",
                                  "gemv_pipelined", "bitwise", "product", "replicated_write"])
def test_every_contribution_of_these_examples_is_visible(name):
    w = oracle.witness(str(ROOT / "examples" / f"{name}.py"))
    for audit in w.reducers:
        assert audit.exact, audit.describe()
        assert audit.dropped_visible == audit.contributions, audit.describe()
        if audit.op in ("sum", "bitxor", "product"):
            assert audit.duplicated_visible == audit.contributions, audit.describe()


def test_two_parameters_feeding_one_sum_never_share_a_value():
    w = oracle.witness(str(ROOT / "examples" / "two_sites_8_16.py"))
    a, b = w.inputs["a"].tolist(), w.inputs["b"].tolist()
    assert not set(a) & set(b) and len(set(a + b)) == 24
    (acc,) = w.reducers
    assert acc.distinct


def test_bitwise_witness_is_one_hot_below_and_one_cold_above():
    w = oracle.witness(str(ROOT / "examples" / "bitwise.py"))
    x = w.inputs["x"].view(np.uint32).astype(np.int64)
    low, high = x & 0xFFFF, x >> 16
    assert all(bin(v).count("1") == 1 for v in low.tolist())
    assert all(bin(v).count("1") == 15 for v in high.tolist())
    assert len(set(low.tolist())) == 8
    by_name = {a.reducer: a for a in w.reducers}
    assert by_name["r_and"].dropped_visible == 8 and by_name["r_or"].dropped_visible == 8
    assert by_name["r_and"].duplicated_visible is None        # idempotent: hidden
    assert by_name["r_xor"].duplicated_visible == 8


def test_max_min_witness_is_a_signed_permutation_with_a_unique_extremum_per_row():
    w = oracle.witness(str(ROOT / "examples" / "max_min.py"))
    x = w.inputs["x"]
    assert len(np.unique(np.abs(x))) == x.size and (x < 0).any() and (x > 0).any()
    for audit in w.reducers:
        assert audit.distinct and audit.dropped_visible == audit.outputs == 4
        assert audit.duplicated_visible is None


def test_a_max_only_input_is_negative_and_scaled_when_exp_reads_it_too():
    w = oracle.witness(str(ROOT / "examples" / "online_softmax_stats.py"))
    x = w.inputs["X"]
    assert (x < 0).all() and (x > -1).all() and len(np.unique(x)) == min(x.size, 251)
    by_name = {a.reducer: a for a in w.reducers}
    assert by_name["tile_max"].dropped_visible == by_name["tile_max"].outputs
    # exp(x - m) cannot be designed: the audit says so instead of claiming it
    assert not by_name["tile_sum"].exact and by_name["tile_sum"].dropped_visible == 0


def test_product_witness_is_powers_of_two_and_exact():
    w = oracle.witness(str(ROOT / "examples" / "product.py"))
    assert set(np.abs(w.inputs["x"]).reshape(-1).tolist()) <= {2.0, 0.5}
    (prod,) = w.reducers
    assert prod.exact and prod.dropped_visible == prod.contributions == 16
    assert oracle.reference(str(ROOT / "examples" / "product.py")).exact


def test_integer_products_get_odd_factors():
    w = oracle.witness(str(ROOT / "examples" / "int_wrap.py"))
    p = w.inputs["p"]
    assert (p % 2 == 1).all() and (p >= 3).all() and len(set(p.tolist())) == 16


GATHER = '''# input: idx=[3, 0, 15, 7, 7, 2, 9, 11]
import tilelang.language as T


@T.prim_func
def main(idx: T.Tensor((8,), T.int32), x: T.Tensor((16,), T.float32),
         out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        i_frag = T.alloc_fragment((8,), T.int32)
        T.copy(idx, i_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(8):
            T.reducer_update(acc[0], x[i_frag[j]])
        r = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, r)
        T.copy(r, out)
'''


def test_an_index_input_keeps_the_programs_values_and_the_audit_sees_the_repeat():
    w = oracle.witness(GATHER)
    assert w.schemes["idx"].kind == "default" and w.schemes["x"].kind == "distinct"
    assert w.inputs["idx"].tolist() == [3, 0, 15, 7, 7, 2, 9, 11]
    assert len(set(w.inputs["x"].tolist())) == 16
    (acc,) = w.reducers
    # x[7] enters twice: the witness does not claim distinct contributions
    assert not acc.distinct and acc.dropped_visible == 8


def test_roles_name_the_direct_varying_and_scale_uses():
    found = roles(pipeline.load(GEMV).func)
    assert [u.kind for u in found.uses["A"]] == ["varying"]
    assert [(u.kind, u.partner) for u in found.uses["x"]] == [("scale", "A")]
    assert found.uses["y"] == [] and not found.index


def test_the_witness_is_a_function_of_program_and_seed():
    a, b = oracle.witness_inputs(GEMV, seed=3), oracle.witness_inputs(GEMV, seed=3)
    c = oracle.witness_inputs(GEMV, seed=4)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["A"], c["A"])
    # a different seed is still a witness
    assert oracle.check(GEMV, drop_one(1, 1), seed=4).tensor("y").mismatches == 1


def test_witness_json_and_lines_name_every_parameter_and_reducer():
    w = oracle.witness(GEMV)
    doc = w.to_json()
    assert set(doc) == {"seed", "params", "blocks", "audited", "reducers"}
    assert set(doc["params"]) == {"A", "x", "y"} and doc["reducers"][0]["reducer"] == "acc"
    text = "\n".join(w.lines())
    assert "distinct odd integers" in text and "exact in every order" in text


WIDE = '''import tilelang.language as T


@T.prim_func
def main(a: T.Tensor((2, 48), T.int8), b: T.Tensor((2, 48), T.float16),
         o: T.Tensor((2,), T.int32), s: T.Tensor((2,), T.float16)):
    with T.Kernel(1, threads=128) as bx:
        f = T.alloc_fragment((2, 48), T.int8)
        g = T.alloc_fragment((2, 48), T.float16)
        T.copy(a, f)
        T.copy(b, g)
        acc = T.alloc_reducer((2,), T.int32, op="bitor")
        tot = T.alloc_reducer((2,), T.float16, op="sum")
        T.reducer_init(acc)
        T.reducer_init(tot)
        for i, k in T.Parallel(2, 48):
            T.reducer_update(acc[i], T.cast(f[i, k], T.int32))
            T.reducer_update(tot[i], g[i, k] - 3)
        r = T.alloc_fragment((2,), T.int32)
        q = T.alloc_fragment((2,), T.float16)
        T.finalize_reducer(acc, r)
        T.finalize_reducer(tot, q)
        T.copy(r, o)
        T.copy(q, s)
'''


def test_an_offset_update_and_more_contributions_than_bits():
    """`g - 3`: the values start at 4, so no contribution is 0, and 48 of them stay
    exact in a float16 sum. bitor of 48 int8 words per output: at most 8 can own a bit
    (pigeonhole); the sparse one-hot cycle gives bits to nearly that many instead of
    sharing every bit among six."""
    w = oracle.witness(WIDE)
    b = w.inputs["b"].astype(np.float64)
    assert b.min() >= 4 and (b == np.round(b)).all()
    by_name = {a.reducer: a for a in w.reducers}
    tot, acc = by_name["tot"], by_name["acc"]
    assert tot.exact and tot.dropped_visible == tot.contributions == 96
    assert 12 <= acc.dropped_visible <= 16
    report = oracle.check(WIDE, oracle.backend("sim:auto"))
    assert report.ok and report.tensor("s").status == "exact"


@pytest.mark.parametrize("case", range(12))
def test_fuzzed_programs_witness_fits_and_the_simulator_agrees(case):
    """Programs of the differential fuzzer (every dtype, surface and shape it draws):
    the witness fits every parameter, the simulator's plans agree with the interpreter
    on it, and where the audit says exact they agree bit for bit."""
    from verify_reducer.verify.fuzzing.grammar import draw
    from verify_reducer.verify.fuzzing.program import render
    prog = oracle.load(render(draw(np.random.default_rng([20240613, case]))))
    w = oracle.witness(prog)
    assert w.audited
    inputs_mod.conform_given(prog.loaded.func, w.inputs)
    for spec in ("sim:auto", "sim:canonical"):
        report = oracle.check(prog, oracle.backend(spec))
        assert report.ok, str(report)
        if all(a.exact for a in w.reducers):
            assert all(t.status == "exact" for t in report.tensors if t.output), str(report)


def test_a_narrow_sum_of_more_terms_than_its_integers_alternates_signs(tmp_path):
    """Issue 24: a bfloat16 sum of 384 contributions cannot stay exact on positive
    values (384 > 2^8); the witness alternates ±1, so each side stays within 2^8 and
    every order is exact: a wrong answer is refuted, not inconclusive."""
    source = (ROOT / "tests" / "programs" / "inconclusive" / "bf16_sum_256.py").read_text()
    lines = [line for line in source.splitlines() if not line.startswith("# input:")]
    path = tmp_path / "bf16_sum_384.py"
    path.write_text("\n".join(lines).replace("N = 256", "N = 384") + "\n")
    w = oracle.witness(path)
    x = w.inputs["x"].astype(np.float64)
    assert set(np.unique(x)) == {-1.0, 1.0} and (x > 0).sum() == (x < 0).sum() == 192
    (audit,) = w.reducers
    assert audit.exact and audit.dropped_visible == 384
    assert oracle.check(path, oracle.backend("sim:auto")).verdict == "match"
    wrong = oracle.compare(path, {"out": np.array([1000.0], np.float32)})
    assert wrong.verdict == "mismatch"
