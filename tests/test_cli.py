"""The CLI contract of docs/design.md §15: subcommands, --json, the output file and exit
codes."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.verify.cli.commands import main

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = str(ROOT / "examples" / "minimal_legacy.py")


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_run_interp_writes_36(tmp_path, capsys):
    inputs = tmp_path / "in.npz"
    np.savez(inputs, x=np.arange(1, 9, dtype=np.float32))
    out_file = tmp_path / "out.npz"
    code, out, _ = run_cli(capsys, "run", MINIMAL, "--backend", "interp",
                           "--inputs", str(inputs), "--output", str(out_file))
    assert code == 0
    with np.load(out_file) as data:
        assert data["out"].tolist() == [36.0]
        assert data["x"].tolist() == list(range(1, 9))


def test_run_json_document(tmp_path, capsys):
    inputs = tmp_path / "in.npz"
    np.savez(inputs, x=np.arange(1, 9, dtype=np.float32))
    code, out, _ = run_cli(capsys, "run", MINIMAL, "--inputs", str(inputs), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["exit_code"] == 0
    assert doc["outputs"]["out"]["values"] == [36.0]
    assert doc["bounds"]["out"]["shape"] == [1]


def test_bare_program_means_check(capsys):
    code, out, _ = run_cli(capsys, MINIMAL, "--json")
    doc = json.loads(out)
    assert code == 0
    assert doc["command"] == "check" and doc["verdict"] == "verified"


def test_check_human_report(capsys):
    code, out, _ = run_cli(capsys, "check", MINIMAL)
    assert code == 0
    assert "verdict: verified" in out


def test_emit_ir_shows_canonical_update(capsys):
    code, out, _ = run_cli(capsys, "emit", MINIMAL, "--what", "ir")
    assert code == 0
    assert "reducer_update" in out


def test_missing_file_is_usage_error(capsys, tmp_path):
    code, _, err = run_cli(capsys, "check", str(tmp_path / "nope.py"))
    assert code == 2 and "no such file" in err


def test_bad_flag_is_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", MINIMAL, "--backend", "nonsense"])
    assert exc.value.code == 2


def test_unknown_func_is_usage_error(capsys):
    code, _, err = run_cli(capsys, "run", MINIMAL, "--func", "nope")
    assert code == 2 and "nope" in err


def test_bad_inputs_file_is_usage_error(capsys, tmp_path):
    inputs = tmp_path / "in.npz"
    np.savez(inputs, x=np.arange(5, dtype=np.float32))
    code, _, err = run_cli(capsys, "run", MINIMAL, "--inputs", str(inputs))
    assert code == 2 and "shape" in err


def test_rejected_program_exits_1_with_caret(capsys, tmp_path):
    prog = tmp_path / "bad.py"
    prog.write_text("import tilelang.language as T\n\n@T.prim_func\n"
                    "def main(x: T.Tensor((8,), T.float32)):\n"
                    "    with T.Kernel(1, threads=32) as bx:\n"
                    "        while True:\n            pass\n")
    code, _, err = run_cli(capsys, "check", str(prog))
    assert code == 1
    assert f"{prog}:6:9: error[R100]" in err
    assert "^" in err


def test_rejected_program_json(capsys, tmp_path):
    prog = tmp_path / "bad.py"
    prog.write_text("import tilelang.language as T\nx = (\n")
    code, out, _ = run_cli(capsys, "check", str(prog), "--json")
    doc = json.loads(out)
    assert code == 1 and doc["verdict"] == "rejected"
    diag = doc["diagnostics"][0]
    assert diag["code"] == "R100"
    assert set(diag) >= {"code", "severity", "message", "line", "col", "end_line",
                         "end_col", "notes"}


def test_internal_error_exits_4_with_report(capsys, monkeypatch):
    from verify_reducer.verify.oracle import pipeline
    def boom(*a, **k):
        raise RuntimeError("planted")
    monkeypatch.setattr(pipeline, "check", boom)
    code, _, err = run_cli(capsys, "check", MINIMAL)
    assert code == 4
    assert "internal error" in err and "planted" in err and "Traceback" not in err


TWO_SITES = str(ROOT / "examples" / "two_sites_8_16.py")


def test_legacy_plan_reproduces_576_and_exits_3(capsys, tmp_path):
    out_file = tmp_path / "out.npz"
    code, out, err = run_cli(capsys, "run", MINIMAL, "--backend", "sim", "--plan",
                             "legacy", "--output", str(out_file))
    assert code == 3
    assert "error[R503]" in err and "entered total[0] 16 times" in err
    with np.load(out_file) as data:
        assert data["out"].tolist() == [576.0]


def test_canonical_and_fast_plans_give_36(capsys):
    for plan in ("canonical", "fast", "auto"):
        code, out, _ = run_cli(capsys, "run", MINIMAL, "--backend", "sim", "--plan", plan,
                               "--json")
        doc = json.loads(out)
        assert code == 0 and doc["outputs"]["out"]["values"] == [36.0], plan
        assert doc["violations"] == []


def test_fast_plan_refused_exits_1_with_the_counterexample(capsys):
    code, _, err = run_cli(capsys, "run", TWO_SITES, "--backend", "sim", "--plan", "fast")
    assert code == 1
    assert "error[R400]" in err and "k=8 is missing from group {0..7}" in err


def test_check_json_lists_epochs_with_proofs(capsys):
    code, out, _ = run_cli(capsys, "check", TWO_SITES, "--json")
    doc = json.loads(out)
    assert code == 0
    (epoch,) = doc["epochs"]
    assert epoch["reducer"] == "acc" and epoch["plan"] == "canonical"
    assert epoch["notes"][0]["code"] == "R400"
    assert all(set(p) == {"name", "result", "ms", "counterexample"} for p in epoch["proofs"])
    assert any(p["result"] == "refuted" and p["counterexample"] for p in epoch["proofs"])


def test_check_minimal_gets_fast_width_8(capsys):
    code, out, _ = run_cli(capsys, "check", MINIMAL, "--json")
    doc = json.loads(out)
    (epoch,) = doc["epochs"]
    assert (epoch["plan"], epoch["width"]) == ("fast", 8)
    assert all(p["result"] == "proved" for p in epoch["proofs"])
    assert set(doc["comparisons"]) == {"sim/auto", "sim/canonical"}


def test_emit_layout_plan_and_smt2(capsys):
    code, out, _ = run_cli(capsys, "emit", MINIMAL, "--what", "layout")
    assert code == 0 and "thread = 8*rep + j, slot = 0, replicate 16" in out
    code, out, _ = run_cli(capsys, "emit", MINIMAL, "--what", "plan", "--plan", "canonical")
    assert code == 0 and "bar.sync 1, 128" in out and "rep == 0" in out
    code, out, _ = run_cli(capsys, "emit", MINIMAL, "--what", "smt2")
    assert code == 0 and "(check-sat)" in out


@pytest.mark.parametrize("content", [b"", b"not a zip", b"\x93NUMPY"])
def test_unreadable_inputs_file_is_usage_error(capsys, tmp_path, content):
    bad = tmp_path / "in.npz"
    bad.write_bytes(content)
    code, _, err = run_cli(capsys, "run", MINIMAL, "--inputs", str(bad))
    assert code == 2 and "cannot read inputs" in err


def test_single_array_npy_as_inputs_is_usage_error(capsys, tmp_path):
    npy = tmp_path / "x.npy"
    np.save(npy, np.arange(8, dtype=np.float32))
    code, _, err = run_cli(capsys, "run", MINIMAL, "--inputs", str(npy))
    assert code == 2 and "keyed by parameter name" in err


def test_empty_directory_and_undecodable_file_are_usage_errors(capsys, tmp_path):
    code, _, err = run_cli(capsys, "check", str(tmp_path))
    assert code == 2 and f"{tmp_path}: no .py files in the directory" in err
    binary = tmp_path / "bin.py"
    binary.write_bytes(b"\xff\xfe\x00")
    code, _, err = run_cli(capsys, "check", str(binary))
    assert code == 2 and "cannot read" in err


def test_several_prim_funcs_need_func(capsys, tmp_path):
    prog = tmp_path / "two.py"
    kernel = ("@T.prim_func\ndef {}(x: T.Tensor((8,), T.float32)):\n"
              "    with T.Kernel(1, threads=32):\n        x[0] = 1.0\n")
    prog.write_text("import tilelang.language as T\n" + kernel.format("a") + kernel.format("b"))
    code, _, err = run_cli(capsys, "check", str(prog))
    assert code == 2 and "--func" in err
    code, out, _ = run_cli(capsys, "check", str(prog), "--func", "b")
    assert code == 0 and "verdict: verified" in out


def test_check_exits_3_when_a_simulated_plan_breaks_exactly_once(capsys, monkeypatch):
    from verify_reducer.verify.oracle import pipeline
    real = pipeline.make_plan
    monkeypatch.setattr(pipeline, "make_plan", lambda loaded, planner: real(loaded, "legacy"))
    code, out, err = run_cli(capsys, "check", MINIMAL)
    assert code == 3
    assert "verdict: mismatch" in out
    assert "MISMATCH out[0]: got 576.0, expected 36.0" in out
    assert "error[R503]" in err


def test_construct_the_cuda_renderer_does_not_lower_is_a_usage_error(capsys, tmp_path):
    """A program the verifier accepts but the CUDA renderer cannot lower (a T.Parallel
    nested in another with a statement beside it: a perfect nest is one T.Parallel)
    makes `emit --what cuda` exit 2 naming the file and the line, not exit 4 "our
    bug"."""
    prog = tmp_path / "nested.py"
    prog.write_text(
        "import tilelang.language as T\n\n"
        "@T.prim_func\n"
        "def main(x: T.Tensor((4, 4), T.float32)):\n"
        "    with T.Kernel(1, threads=32) as bx:\n"
        "        for i in T.Parallel(4):\n"
        "            for j in T.Parallel(4):\n"
        "                x[i, j] = 1.0\n"
        "            x[i, 0] = 2.0\n")
    assert main(["emit", str(prog), "--what", "cuda"]) == 2
    err = capsys.readouterr().err
    assert f"{prog}: the CUDA backend does not lower this program: line 7" in err


@pytest.mark.parametrize("perturb, code, status", [(0.0, 0, "== interpreter"),
                                                   (1.0, 3, "MISMATCH out[0]")])
def test_run_cuda_is_judged_against_the_interpreter(capsys, monkeypatch, perturb, code,
                                                    status):
    """`run --backend cuda` compares the GPU's outputs with the interpreter (as
    --backend tilelang does): a value beyond the bound is a mismatch, exit 3. The GPU is
    stood in for by a fake run_cuda returning the interpreter's answer, perturbed."""
    from verify_reducer.interp.logical import run
    from verify_reducer.verify.oracle import pipeline
    def fake_run_cuda(plan, inputs):
        outputs = {k: np.array(v, copy=True) for k, v in run(plan.func, inputs).outputs.items()}
        outputs["out"] = outputs["out"] + np.float32(perturb)
        return outputs
    monkeypatch.setattr(pipeline, "run_cuda", fake_run_cuda)
    got, out, _ = run_cli(capsys, "run", MINIMAL, "--backend", "cuda")
    assert got == code
    assert f"cuda/auto {status}" in out
