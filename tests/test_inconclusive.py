"""Issue 24, "unknown never passes": an element whose bound cannot judge it makes the
verdict inconclusive (exit 5) in check, run, compare, the oracle API and the pytest
plugin, never verified or match; overflowing orders are legal results, not false
alarms; batches rank inconclusive after mismatch and before rejected."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from verify_reducer import oracle
from verify_reducer.verify.cli.commands import main
from verify_reducer.verify.cli.output import worst
from verify_reducer.verify.oracle import pipeline

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "tests" / "programs"
BF16_256 = str(PROGRAMS / "inconclusive" / "bf16_sum_256.py")
F16_2048 = str(PROGRAMS / "valid" / "f16_sum_2048_seeded.py")
OVERFLOW32 = str(PROGRAMS / "valid" / "overflow_sum_float32.py")
OVERFLOW64 = str(PROGRAMS / "valid" / "overflow_sum_float64.py")
BOTH_SIGNS = str(PROGRAMS / "inconclusive" / "overflow_both_signs_float32.py")
MINIMAL = str(ROOT / "examples" / "minimal_v2.py")
REJECTED = str(PROGRAMS / "invalid" / "r201_update_after_finalize.py")


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _uniform(n: int, seed: int = 3) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, n)


@pytest.fixture
def uniform_256(tmp_path) -> Path:
    """256 inputs uniform in [-1, 1): a bfloat16 sum of them has a vacuous bound."""
    path = tmp_path / "in.npz"
    np.savez(path, x=_uniform(256))
    return path


def _outputs(tmp_path, name: str, **arrays) -> Path:
    path = tmp_path / name
    np.savez(path, **arrays)
    return path


# ------------------------------------------------------------------ check and run

def test_check_of_a_bfloat16_sum_of_256_terms_is_inconclusive(capsys):
    code, out, _ = run_cli(capsys, "check", BF16_256)
    assert code == pipeline.EXIT_INCONCLUSIVE == 5
    assert "verdict: inconclusive" in out and "verified" not in out
    assert "INCONCLUSIVE out: 1 of 1 element(s) not judged, first out[0]" in out
    assert "its bound is infinite" in out and "`--inputs witness` chooses inputs" in out
    # the witness keeps the sum exact: the same program verifies on it
    code, out, _ = run_cli(capsys, "check", BF16_256, "--inputs", "witness")
    assert code == 0 and "verdict: verified" in out


def test_check_json_names_the_unjudged_element(capsys):
    code, out, _ = run_cli(capsys, "check", BF16_256, "--json")
    doc = json.loads(out)
    assert code == 5 and doc["verdict"] == "inconclusive" and doc["exit_code"] == 5
    for comps in doc["comparisons"].values():
        (c,) = [c for c in comps if c["name"] == "out"]
        assert c["ok"] and c["status"] == "inconclusive" and c["unchecked"] == 1
        assert c["unchecked_first"]["index"] == [0]
        assert c["unchecked_first"]["bound"] == "inf"
        assert c["unchecked_first"]["why"] == "its bound is infinite"


def test_a_float16_sum_of_2048_uniform_terms_is_inconclusive_and_seeded_ones_verify():
    given = pipeline.check(F16_2048, given={"x": _uniform(2048)})
    assert given.verdict == "inconclusive" and given.exit_code == 5
    assert all(c.unchecked == (c.name == "out") for cs in given.comparisons.values()
               for c in cs)
    seeded = pipeline.check(F16_2048)
    assert seeded.verdict == "verified"
    assert seeded.loaded.inputs(0)["x"].tolist().count(0.0) == 0


def test_run_cuda_comparisons_exit_5_when_an_element_is_not_judged():
    """`run --backend cuda|tilelang` judge by pipeline.comparisons_exit: a comparison
    with an unjudged element and no refuted one is 5, a refuted one 3."""
    unjudged = pipeline.Comparison("out", True, 0, 1, compared=1)
    refuted = pipeline.Comparison("out", False, 1, 1, (0,), 1.0, 2.0, 0.0, 1)
    judged = pipeline.Comparison("out", True, 0, 0, compared=1)
    assert pipeline.comparisons_exit([], [judged, unjudged]) == 5
    assert pipeline.comparisons_exit([], [unjudged, refuted]) == 3
    assert pipeline.comparisons_exit([], [judged]) == 0
    assert unjudged.status == "inconclusive" and unjudged.inconclusive
    assert refuted.status == "mismatch" and judged.status == "match"


# ------------------------------------------------------------------ overflow

def test_a_float32_sum_whose_order_overflows_is_no_false_alarm(capsys):
    """[3e38, 3e38, -3e38]: the simulated plans add 3e38 + 3e38 first and get +inf, a
    legal result of that order (it was a MISMATCH against our own plans)."""
    sim = pipeline.run_backend(pipeline.load(OVERFLOW32), "sim",
                               pipeline.load(OVERFLOW32).inputs(0), "auto")
    assert sim.outputs["out"].tolist() == [np.inf]
    code, out, _ = run_cli(capsys, "check", OVERFLOW32)
    assert code == 0 and "verdict: verified" in out
    assert "1 element(s) where some order overflows" in out


@pytest.mark.parametrize("path, truth", [(OVERFLOW32, 3e38), (OVERFLOW64, 1e308)])
def test_compare_takes_the_overflowing_order_and_refutes_a_wrong_value(path, truth,
                                                                      tmp_path, capsys):
    dtype = np.float32 if "32" in path else np.float64
    inf = _outputs(tmp_path, "inf.npz", out=np.array([np.inf], dtype))
    code, out, _ = run_cli(capsys, "compare", path, "--outputs", inf, "--inputs", "seeded")
    assert code == 0 and "verdict: match" in out and "some order overflows" in out
    for wrong in (-np.inf, 1000.0, np.nan):
        bad = _outputs(tmp_path, "bad.npz", out=np.array([wrong], dtype))
        code, out, _ = run_cli(capsys, "compare", path, "--outputs", bad, "--inputs",
                               "seeded")
        assert code == 3 and "verdict: mismatch" in out, (wrong, out)
    right = _outputs(tmp_path, "right.npz", out=np.array([truth], dtype))
    code, _, _ = run_cli(capsys, "compare", path, "--outputs", right, "--inputs", "seeded")
    assert code == 0


def test_both_signs_overflowing_is_inconclusive_for_any_answer(tmp_path, capsys):
    report = pipeline.check(BOTH_SIGNS)
    assert report.verdict == "inconclusive"
    for value in (0.0, np.inf, -np.inf, np.nan, 1000.0):
        path = _outputs(tmp_path, "o.npz", out=np.array([value], np.float32))
        code, _, _ = run_cli(capsys, "compare", BOTH_SIGNS, "--outputs", path,
                             "--inputs", "seeded")
        assert code == 5, value


# ------------------------------------------------------------------ compare

def test_compare_of_a_wrong_output_where_the_bound_is_vacuous_exits_5(uniform_256,
                                                                        tmp_path, capsys):
    """The campaign's case: 1000.0 where the truth is a small number was `match`, exit 0."""
    wrong = _outputs(tmp_path, "out.npz", out=np.array([1000.0], np.float32))
    code, out, err = run_cli(capsys, "compare", BF16_256, "--outputs", wrong,
                             "--inputs", uniform_256)
    assert code == 5
    assert "verdict: inconclusive" in out and "match" not in out
    assert "out[0] = 1000.0" in out and "not judged, its bound is infinite" in out
    assert "could not be judged" in err
    code, out, _ = run_cli(capsys, "compare", BF16_256, "--outputs", wrong, "--inputs",
                           uniform_256, "--json")
    doc = json.loads(out)
    assert code == 5 and doc["verdict"] == "inconclusive" and doc["ok"] is False
    (t,) = doc["tensors"]
    assert t["status"] == "inconclusive" and t["unchecked"] == 1
    assert t["unchecked_listed"][0]["got"] == 1000.0
    assert t["unchecked_listed"][0]["why"] == "its bound is infinite"


def test_compare_on_witness_inputs_judges_the_same_sum_exactly(tmp_path, capsys):
    """The witness keeps the bfloat16 sum exact (256 ones): 1000 is refuted."""
    wrong = _outputs(tmp_path, "out.npz", out=np.array([1000.0], np.float32))
    code, out, _ = run_cli(capsys, "compare", BF16_256, "--outputs", wrong)
    assert code == 3 and "exact expected" in out


# ------------------------------------------------------------------ oracle API

def test_the_oracle_report_says_inconclusive_never_ok():
    ins = {"x": _uniform(256)}
    ref = oracle.reference(BF16_256, ins)
    assert np.isinf(ref.bounds["out"]).all() and not ref.exact
    for value in (1000.0, float(ref.outputs["out"][0])):     # even the reference's own
        report = oracle.compare(BF16_256, {"out": np.array([value], np.float32)}, ref=ref)
        assert report.verdict == "inconclusive" and report.inconclusive
        assert not report.ok and report.unchecked == 1
        t = report.tensor("out")
        assert t.status == "inconclusive" and not t.ok and t.exact == 0
        (u,) = t.unchecked_listed
        assert u.index == (0,) and u.got == value and u.why == "its bound is infinite"
        assert "verdict: inconclusive" in str(report) and "match" not in str(report)
        assert report.to_json()["verdict"] == "inconclusive"


# ------------------------------------------------------------------ batches

def test_worst_ranks_inconclusive_after_mismatch_and_before_rejected():
    assert worst([0, 5]) == 5
    assert worst([5, 1]) == 5
    assert worst([3, 5, 1, 0]) == 3
    assert worst([5, 2]) == 2 and worst([5, 4]) == 4


def test_check_of_several_files_exits_with_the_worst(capsys):
    code, out, _ = run_cli(capsys, "check", MINIMAL, BF16_256, REJECTED)
    assert code == 5
    assert "1 verified, 1 inconclusive, 1 rejected; exit 5" in out
    code, out, _ = run_cli(capsys, "check", MINIMAL, BF16_256, "--json")
    doc = json.loads(out)
    assert code == 5 and doc["summary"]["verdicts"] == {"verified": 1, "inconclusive": 1}


def test_the_inconclusive_documents_follow_their_schemas(uniform_256, tmp_path, capsys):
    """check, compare and a batch's summary, inconclusive, against verify_reducer/schemas."""
    conventions = pytest.importorskip("test_cli_conventions")
    wrong = _outputs(tmp_path, "out.npz", out=np.array([1000.0], np.float32))
    for argv in (("check", BF16_256, "--json"), ("check", OVERFLOW32, "--json"),
                 ("compare", BF16_256, "--outputs", wrong, "--inputs", uniform_256,
                  "--json"),
                 ("compare", OVERFLOW32, "--outputs", wrong, "--inputs", "seeded",
                  "--json")):
        code, out, _ = run_cli(capsys, *argv)
        assert code in (0, 3, 5)
        conventions.assert_valid(conventions.strict_json(out))
    code, out, _ = run_cli(capsys, "check", MINIMAL, BF16_256, "--json")
    conventions.assert_valid(conventions.strict_json(out))


def test_the_html_report_says_inconclusive(tmp_path, capsys):
    pytest.importorskip("jinja2")
    html = tmp_path / "report.html"
    code, out, _ = run_cli(capsys, "check", BF16_256, "--html", html, "-q")
    assert code == 5 and out.strip().endswith("inconclusive")
    text = html.read_text()
    assert 'class="verdict-inconclusive">inconclusive' in text
    # per run: the input x is judged (unchanged), the output out is not
    assert text.count("INCONCLUSIVE (1 element(s) not judged: its bound is infinite)") == 2
    assert text.count('<td class="ok">== interpreter</td>') == 2
