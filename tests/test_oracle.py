"""The public oracle API (verify_reducer.oracle): load, reference, compare, check, the
backends, the report's text and JSON, and clear errors instead of bare KeyErrors."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.verify.oracle import pipeline
from verify_reducer import oracle

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = str(ROOT / "examples" / "minimal_v2.py")
GEMV = str(ROOT / "examples" / "gemv_pipelined.py")
INVALID = str(ROOT / "tests" / "programs" / "invalid" / "r201_update_after_finalize.py")


def test_all_names_exist():
    for name in oracle.__all__:
        assert hasattr(oracle, name), name


def test_load_from_a_path_and_from_source_text():
    prog = oracle.load(MINIMAL)
    assert prog.func == "main" and prog.outputs == ("out",)
    assert prog.params == {"x": ((8,), "float32"), "out": ((1,), "float32")}
    same = oracle.load(Path(MINIMAL).read_text())
    assert same.path == "<source>" and same.params == prog.params
    assert oracle.load(prog) is prog


def test_load_errors_are_clear():
    with pytest.raises(oracle.ProgramError, match="no such file"):
        oracle.load(str(ROOT / "no_such_program.py"))
    with pytest.raises(oracle.ProgramError, match="no prim_func named 'other'"):
        oracle.load(MINIMAL, func="other")


def test_a_rejected_program_has_no_reference():
    prog = oracle.load(INVALID)                  # it parses; the verifier rejects it
    with pytest.raises(oracle.ProgramRejected) as info:
        oracle.reference(prog)
    assert "R201" in {d.code for d in info.value.diagnostics}
    assert "R201" in str(info.value)
    with pytest.raises(oracle.ProgramRejected):
        oracle.check(prog, oracle.backend("interp"))


def test_reference_defaults_to_witness_inputs_and_exact_bounds():
    ref = oracle.reference(MINIMAL)
    assert ref.inputs_kind == "witness" and ref.witness is not None
    assert ref.written == ("out",) and ref.exact
    assert ref.outputs["out"][0] == ref.inputs["x"].astype(np.float64).sum()


def test_reference_inputs_seeded_given_and_partial():
    seeded = oracle.reference(MINIMAL, "seeded")
    # the program's `# input:` line, as `run` uses it
    assert seeded.inputs_kind == "seeded" and seeded.outputs["out"].tolist() == [36.0]
    given = oracle.reference(MINIMAL, {"x": np.arange(8), "out": np.zeros(1)})
    assert given.inputs_kind == "given" and given.outputs["out"].tolist() == [28.0]
    partial = oracle.reference(MINIMAL, {"x": np.ones(8)})
    assert partial.inputs_kind == "given, the rest witness"
    assert partial.outputs["out"].tolist() == [8.0]
    partial = oracle.reference(MINIMAL, {"x": np.ones(8)}, fill="seeded")
    assert partial.inputs_kind == "given, the rest seeded"


def test_bad_inputs_raise_value_errors_naming_the_parameter():
    with pytest.raises(oracle.InputError, match="no parameter named nope"):
        oracle.reference(MINIMAL, {"nope": np.ones(3)})
    with pytest.raises(oracle.InputError, match="x has shape"):
        oracle.reference(MINIMAL, {"x": np.ones(3)})
    with pytest.raises(ValueError, match="fill must be"):
        oracle.reference(MINIMAL, {"x": np.ones(8)}, fill="zeros")


def test_reference_reads_inputs_from_an_npz(tmp_path):
    path = tmp_path / "in.npz"
    np.savez(path, x=np.full(8, 2.0, np.float32))
    ref = oracle.reference(MINIMAL, str(path))
    assert ref.outputs["out"].tolist() == [16.0]


def _uniform_gemv_inputs(seed: int = 0) -> dict[str, np.ndarray]:
    """GEMV inputs uniform in [-1, 1): sums that round (seeded float16 values are
    dyadic and sum exactly), so a bound that is neither 0 nor vacuous."""
    rng = np.random.default_rng(seed)
    shapes = oracle.load(GEMV).params
    return {name: rng.uniform(-1, 1, shape) for name, (shape, _) in shapes.items()
            if name != "y"}


def test_compare_statuses_exact_within_bound_and_mismatch():
    ref = oracle.reference(GEMV, _uniform_gemv_inputs(), fill="seeded")
    exact = oracle.compare(GEMV, {"y": ref.outputs["y"]}, ref=ref)
    assert exact.ok and exact.tensor("y").status == "exact"
    nudged = ref.outputs["y"].copy()
    nudged[3] = np.nextafter(nudged[3], np.float32(np.inf))
    within = oracle.compare(GEMV, {"y": nudged}, ref=ref)
    y = within.tensor("y")
    assert within.ok and y.status == "within_bound" and y.within_bound == 1 and y.exact == 127
    wrong = ref.outputs["y"].copy()
    wrong[[7, 100]] += 1.0
    report = oracle.compare(GEMV, {"y": wrong}, ref=ref)
    y = report.tensor("y")
    assert not report.ok and y.status == "mismatch" and y.mismatches == 2
    assert y.mismatch_indices.tolist() == [[7], [100]]
    assert [m.index for m in y.listed] == [(7,), (100,)]
    assert y.listed[0].got == float(wrong[7]) and y.listed[0].expected == float(ref.outputs["y"][7])
    text = str(report)
    assert "y[7]" in text and "y[100]" in text and "verdict: mismatch" in text


def test_compare_uses_the_same_inputs_as_the_reference():
    ins = oracle.witness_inputs(MINIMAL, seed=2)
    total = np.float32(ins["x"].astype(np.float64).sum())
    assert oracle.compare(MINIMAL, {"out": [total]}, ins).ok
    assert oracle.compare(MINIMAL, {"out": [total]}, seed=2).ok
    assert not oracle.compare(MINIMAL, {"out": [total + 1]}, seed=2).ok


def test_missing_unknown_and_misshapen_outputs_are_errors_naming_the_tensor():
    ref = oracle.reference(MINIMAL)
    with pytest.raises(oracle.OutputsError, match="output out missing"):
        oracle.compare(MINIMAL, {"x": ref.inputs["x"]}, ref=ref)
    with pytest.raises(oracle.OutputsError, match="no tensor named z"):
        oracle.compare(MINIMAL, {"out": ref.outputs["out"], "z": [1]}, ref=ref)
    with pytest.raises(oracle.OutputsError, match=r"output out has shape \(2,\)"):
        oracle.compare(MINIMAL, {"out": [1.0, 2.0]}, ref=ref)
    with pytest.raises(oracle.OutputsError, match="output out: holds"):
        oracle.compare(MINIMAL, {"out": np.array(["a"])}, ref=ref)
    with pytest.raises(oracle.OutputsError, match="must map"):
        oracle.compare(MINIMAL, [1.0], ref=ref)
    assert issubclass(oracle.OutputsError, ValueError)


def test_pipeline_compare_outputs_judges_what_it_is_given():
    """compare_outputs no longer needs every parameter (it raised a bare KeyError)."""
    loaded = pipeline.load(MINIMAL)
    values = loaded.inputs(0)
    ref = pipeline.oracle(loaded, values)
    (only,) = pipeline.compare_outputs({"out": ref.outputs["out"]}, ref)
    assert only.name == "out" and only.ok
    with pytest.raises(pipeline.OutputsError, match="output out missing"):
        pipeline.compare_outputs({"x": values["x"]}, ref, required=["out"])
    with pytest.raises(pipeline.OutputsError, match="no tensor named y"):
        pipeline.compare_outputs({"y": values["x"]}, ref)
    with pytest.raises(pipeline.OutputsError, match="output out"):
        pipeline.compare_outputs({"out": np.zeros(4)}, ref)


def test_report_json_has_stable_fields_and_is_strict_json():
    ref = oracle.reference(MINIMAL)
    report = oracle.compare(MINIMAL, {"out": [np.nan], "x": ref.inputs["x"]}, ref=ref,
                            backend="mine")
    doc = report.to_json()
    assert tuple(doc) == oracle.REPORT_FIELDS
    assert all(tuple(t) == oracle.TENSOR_FIELDS for t in doc["tensors"])
    (m,) = [t for t in doc["tensors"] if t["name"] == "out"][0]["listed"]
    assert tuple(m) == oracle.MISMATCH_FIELDS and m["got"] == "nan"
    assert doc["backend"] == "mine" and doc["verdict"] == "mismatch" and not doc["ok"]
    assert [t["output"] for t in doc["tensors"]] == [False, True]
    json.dumps(doc, allow_nan=False)                    # no bare NaN in the document
    assert json.loads(json.dumps(doc))["witness"]["reducers"][0]["reducer"] == "total"


def test_report_text_marks_inputs_and_lists_a_bounded_number_of_mismatches():
    ref = oracle.reference(GEMV)
    report = oracle.compare(GEMV, {**ref.inputs, "y": ref.outputs["y"] + 1}, ref=ref)
    text = str(report)
    assert "A (input): unchanged" in text and "x (input): unchanged" in text
    y = report.tensor("y")
    assert y.mismatches == 128 and len(y.listed) == 20 and "... and 108 more" in text
    assert "witness inputs:" in text and "distinct odd integers" in text
    with pytest.raises(KeyError, match="no tensor 'q'"):
        report.tensor("q")


def test_builtin_backends_and_their_names():
    assert oracle.backend("interp").name == "interp"
    assert oracle.backend("sim").name == "sim:auto"
    assert oracle.backend("cuda:canonical").name == "cuda:canonical"
    for bad in ("gpu", "interp:fast", "sim:quick"):
        with pytest.raises(ValueError):
            oracle.backend(bad)
    with pytest.raises(ValueError, match="tilelang backend only"):
        oracle.backend("sim", **{"tl.x": "1"})
    assert isinstance(oracle.backend("interp"), oracle.Backend)
    assert isinstance(lambda program, inputs: {}, oracle.Backend)


@pytest.mark.parametrize("spec", ["interp", "sim:canonical", "sim:fast", "sim:auto"])
def test_builtin_backends_match_the_oracle_on_witness_inputs(spec):
    report = oracle.check(GEMV, oracle.backend(spec))
    assert report.ok and report.backend == oracle.backend(spec).name
    assert report.tensor("y").status == "exact"


def test_the_legacy_plan_is_caught_with_its_violation():
    report = oracle.check(str(ROOT / "examples" / "minimal_legacy.py"),
                          oracle.backend("sim:legacy"))
    assert not report.ok
    assert any(v.startswith("R503") for v in report.violations)
    out = report.tensor("out")
    # 16 replicas: every contribution entered 16 times
    assert out.listed[0].got == 16 * out.listed[0].expected


def test_check_gives_the_backend_copies_of_every_input():
    seen = {}

    def backend(program, inputs):
        seen.update(inputs)
        inputs["x"][:] = 0                      # scribbling on them changes nothing
        return {"out": np.float32([inputs_sum])}

    ref = oracle.reference(MINIMAL)
    inputs_sum = np.float32(ref.inputs["x"].astype(np.float64).sum())
    report = oracle.check(MINIMAL, backend)
    assert report.ok and set(seen) == {"x", "out"} and report.backend == "backend"
    assert oracle.reference(MINIMAL).inputs["x"].any()


def test_unavailable_cuda_is_a_clear_error(monkeypatch):
    def no_cuda(plan, values):
        raise pipeline.CudaUnavailable("no pycuda here")
    monkeypatch.setattr(pipeline, "run_cuda", no_cuda)
    with pytest.raises(oracle.BackendUnavailable, match="no pycuda here"):
        oracle.check(MINIMAL, oracle.backend("cuda"))
