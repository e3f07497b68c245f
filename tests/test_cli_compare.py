"""`verify-reducer compare` and `--inputs witness`: exit 0 when another backend's outputs
match the oracle, 3 on a mismatch (with the report), 2 on a usage problem, 1 when the
program is rejected."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.verify.cli.commands import main
from verify_reducer import oracle

ROOT = Path(__file__).resolve().parent.parent
GEMV = str(ROOT / "examples" / "gemv_pipelined.py")
MINIMAL = str(ROOT / "examples" / "minimal_v2.py")
INVALID = str(ROOT / "tests" / "programs" / "invalid" / "r201_update_after_finalize.py")


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def real(tmp_path, capsys):
    """The GEMV's outputs from `run --inputs witness --output` (every parameter)."""
    path = tmp_path / "real.npz"
    code, _, _ = run_cli(capsys, "run", GEMV, "--backend", "sim", "--inputs", "witness",
                         "--output", path)
    assert code == 0
    return path


def _save(path, arrays):
    np.savez(path, **arrays)
    return path


def test_compare_accepts_the_real_outputs(real, capsys):
    code, out, _ = run_cli(capsys, "compare", GEMV, "--outputs", real)
    assert code == 0
    assert "y: exact (128 element(s)" in out and "verdict: match" in out


def test_compare_exits_3_on_a_perturbed_output_and_names_the_element(real, tmp_path, capsys):
    theirs = dict(np.load(real))
    theirs["y"][41] += 1
    code, out, err = run_cli(capsys, "compare", GEMV, "--outputs",
                             _save(tmp_path / "theirs.npz", theirs))
    assert code == 3
    assert "y: MISMATCH in 1 of 128" in out and "y[41]" in out and "off by 1" in out
    assert "does not match the oracle" in err


def test_compare_only_needs_the_written_outputs(real, tmp_path, capsys):
    only_y = _save(tmp_path / "y.npz", {"y": np.load(real)["y"]})
    code, out, _ = run_cli(capsys, "compare", GEMV, "--outputs", only_y)
    assert code == 0 and "A (input)" not in out


def test_compare_json(real, tmp_path, capsys):
    theirs = dict(np.load(real))
    theirs["y"][0] = np.nan
    code, out, _ = run_cli(capsys, "compare", GEMV, "--outputs",
                           _save(tmp_path / "t.npz", theirs), "--json")
    doc = json.loads(out)
    assert code == 3 and doc["command"] == "compare" and doc["exit_code"] == 3
    assert tuple(k for k in doc if k not in ("schema_version", "command", "exit_code")) \
        == oracle.REPORT_FIELDS
    y = [t for t in doc["tensors"] if t["name"] == "y"][0]
    assert y["status"] == "mismatch" and y["listed"][0]["got"] == "nan"
    assert y["listed"][0]["index"] == [0]
    from test_cli_conventions import assert_valid
    assert_valid(doc)                          # verify_reducer/schemas/compare.schema.json


@pytest.mark.parametrize("what, message", [
    ("missing", "output y missing"),
    ("shape", "output y has shape (10,), the program declares (128,)"),
    ("unknown", "no tensor named z"),
])
def test_compare_usage_problems_exit_2_naming_the_tensor(real, tmp_path, capsys, what,
                                                         message):
    theirs = dict(np.load(real))
    if what == "missing":
        del theirs["y"]
    elif what == "shape":
        theirs["y"] = theirs["y"][:10]
    else:
        theirs["z"] = np.zeros(3)
    code, out, err = run_cli(capsys, "compare", GEMV, "--outputs",
                             _save(tmp_path / "t.npz", theirs))
    assert code == 2 and message in err and out == ""


def test_compare_unreadable_outputs_and_missing_flag_exit_2(tmp_path, capsys):
    junk = tmp_path / "junk.npz"
    junk.write_text("not a zip")
    code, _, err = run_cli(capsys, "compare", GEMV, "--outputs", junk)
    assert code == 2 and "--outputs" in err
    code, _, err = run_cli(capsys, "compare", GEMV, "--outputs", tmp_path / "none.npz")
    assert code == 2
    with pytest.raises(SystemExit) as info:
        main(["compare", GEMV])
    assert info.value.code == 2


def test_compare_of_a_rejected_program_exits_1(tmp_path, capsys):
    code, _, err = run_cli(capsys, "compare", INVALID, "--outputs",
                           _save(tmp_path / "t.npz", {"out": np.zeros(1)}))
    assert code == 1 and "R201" in err


def test_compare_with_given_inputs_matches_run_with_the_same_inputs(tmp_path, capsys):
    inputs = _save(tmp_path / "in.npz", {"x": np.arange(10, 18, dtype=np.float32)})
    outputs = tmp_path / "out.npz"
    assert run_cli(capsys, "run", MINIMAL, "--inputs", inputs, "--output", outputs)[0] == 0
    code, out, _ = run_cli(capsys, "compare", MINIMAL, "--outputs", outputs,
                           "--inputs", inputs)
    assert code == 0 and "inputs: given, the rest seeded" in out
    # the same outputs judged on the witness (the default) are wrong
    assert run_cli(capsys, "compare", MINIMAL, "--outputs", outputs)[0] == 3
    # and on seeded inputs (the `# input:` line, x = 1..8) too
    code, out, _ = run_cli(capsys, "compare", MINIMAL, "--outputs", outputs,
                           "--inputs", "seeded")
    assert code == 3 and "expected 36.0" in out


def test_run_inputs_witness_is_the_witness(tmp_path, capsys):
    outputs = tmp_path / "out.npz"
    code, _, _ = run_cli(capsys, "run", GEMV, "--inputs", "witness", "--seed", 5,
                         "--output", outputs)
    assert code == 0
    want = oracle.witness_inputs(GEMV, seed=5)
    with np.load(outputs) as got:
        assert np.array_equal(got["A"], want["A"]) and np.array_equal(got["x"], want["x"])
        assert got["y"].tolist() == oracle.reference(GEMV, seed=5).outputs["y"].tolist()


def test_check_inputs_witness(capsys):
    code, out, _ = run_cli(capsys, "check", GEMV, "--inputs", "witness", "--blocks", "all",
                           "--json", "--values")
    doc = json.loads(out)
    assert code == 0 and doc["verdict"] == "verified"
    want = oracle.reference(GEMV).outputs["y"].tolist()
    assert doc["outputs"]["y"]["values"] == want


def test_compare_is_listed_in_help(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out, _ = capsys.readouterr()
    assert "compare" in out


def test_every_command_prints_its_help(capsys):
    # argparse %-formats help strings: a stray `%` in one (an example assumption such
    # as `M % BLOCK_M == 0`) turned `check --help` into a traceback
    from verify_reducer.verify.cli.parser import build_parser
    parser = build_parser()
    commands = next(a for a in parser._actions if a.choices and "check" in a.choices).choices
    for name in commands:
        with pytest.raises(SystemExit) as exc:
            main([name, "--help"])
        out, _ = capsys.readouterr()
        assert exc.value.code == 0 and "usage:" in out and name in out


@pytest.fixture
def big_gemv(tmp_path) -> Path:
    """The GEMV at 16384 x 4096: a whole-grid run (and its witness) of about 1.5 GiB."""
    source = Path(GEMV).read_text().replace("M = 128\n", "M = 16384\n") \
        .replace("K = 512\n", "K = 4096\n")
    path = tmp_path / "gemv_big.py"
    path.write_text(source)
    return path


@pytest.mark.parametrize("argv", [
    ("compare", "--outputs", "OUT"),
    ("compare", "--outputs", "OUT", "--inputs", "seeded"),
    ("check", "--inputs", "witness"),
    ("run", "--inputs", "witness"),
])
def test_witness_and_reference_runs_are_estimated_before_anything_is_built(
        big_gemv, tmp_path, capsys, argv):
    """Issue 24: `--inputs witness` (compare's default) built every parameter whole
    before any estimate (exit 4 under a 4 GB limit, an OOM kill without one). Now the
    estimate comes first and a run over --max-memory is exit 2, at once."""
    import resource
    import time
    out = _save(tmp_path / "y.npz", {"y": np.zeros(16384, np.float32)})
    argv = [out if a == "OUT" else a for a in argv]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    code, _, err = run_cli(capsys, argv[0], big_gemv, *argv[1:], "--max-memory", "200M")
    assert code == 2
    assert "would need about 1.5 GiB" in err and "over --max-memory 200.0 MiB" in err
    assert time.perf_counter() - start < 10
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 200 * 1024        # nothing of the 1.5 GiB was built


def test_the_oracle_api_refuses_a_witness_over_max_memory(big_gemv):
    with pytest.raises(oracle.TooLarge, match="the witness inputs would need about 1.5 GiB"):
        oracle.witness(big_gemv, max_memory=200 << 20)
    with pytest.raises(oracle.TooLarge, match="the reference run would need about 1.5 GiB"):
        oracle.compare(big_gemv, {"y": np.zeros(16384, np.float32)}, max_memory=200 << 20)
    with pytest.raises(oracle.TooLarge):
        oracle.check(big_gemv, oracle.backend("interp"), "seeded", max_memory=200 << 20)
