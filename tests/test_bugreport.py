"""Each disagreement of TileLang with the oracle becomes a bug report folder that stands
alone: program, inputs, expected and got, TileLang's message and stage, its version and
pass configs, and the command that reproduces it. TileLang is faked
(tests/fake_tilelang.py); what the reports say is pinned here."""
from __future__ import annotations

import json
import pickle
import shlex
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.verify.fuzzing import bugreport

from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.cli.commands import main

from fake_tilelang import FakeTileLang

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = str(ROOT / "examples" / "minimal_legacy.py")
GEMV = str(ROOT / "examples" / "gemv_nondividing.py")
BASELINE = "tl.reducer_force_baseline"
FILES = {"program.py", "inputs.npz", "expected.npz", "bounds.npz", "report.md",
         "report.json"}


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def truth(path: str):
    """respond() for the fake: the interpreter's outputs for the arrays it is given."""
    loaded = pipeline.load(path)
    return lambda arrays: pipeline.oracle(loaded, {n: a.copy() for n, a in arrays.items()}
                                          ).outputs


def zeros_after_three(arrays):
    """TileLang's forced baseline with finalize batch=2, as measured: most rows 0."""
    y = truth(GEMV)(arrays)["y"].copy()
    y[3:] = 0
    return {"y": y}


def the_folder(root: Path) -> Path:
    (folder,) = list(root.iterdir())
    return folder


def load_npz(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


# ----------------------------------------------------------------------------- wrong output

def test_a_wrong_output_is_written_as_a_report(capsys, monkeypatch, tmp_path):
    fake = FakeTileLang(respond=zeros_after_three)
    fake.install(monkeypatch)
    code, out, _ = run_cli(capsys, "run", GEMV, "--backend", "tilelang",
                           "--tilelang-config", f"{BASELINE}=true",
                           "--bug-report", str(tmp_path))
    assert code == 3 and "tilelang MISMATCH y[3]" in out
    folder = the_folder(tmp_path)
    assert f"bug report: {folder}" in out
    assert folder.name.startswith("tilelang-main-mismatch-")
    assert {p.name for p in folder.iterdir()} == FILES | {"got.npz"}
    assert (folder / "program.py").read_text() == Path(GEMV).read_text()

    sent = fake.ran[0]
    inputs = load_npz(folder / "inputs.npz")
    assert sorted(inputs) == ["A", "x", "y"]
    assert all(np.array_equal(inputs[n], sent[n]) for n in inputs)
    expected = load_npz(folder / "expected.npz")["y"]
    assert np.array_equal(expected, truth(GEMV)(sent)["y"])
    got = load_npz(folder / "got.npz")["y"]
    assert np.array_equal(got[:3], expected[:3]) and not got[3:].any()
    assert load_npz(folder / "bounds.npz")["y"].shape == (16,)

    facts = json.loads((folder / "report.json").read_text())
    assert facts["kind"] == "mismatch" and facts["tilelang_version"] == "0.1.15"
    assert facts["pass_configs"] == {BASELINE: True}
    by_name = {o["name"]: o for o in facts["outputs"]}
    assert by_name["A"]["ok"] and by_name["x"]["ok"] and not by_name["y"]["ok"]
    y = by_name["y"]
    assert (y["mismatches"], y["elements"], y["zeros_among_mismatches"]) == (13, 16, 13)
    assert [m["index"] for m in y["first_mismatches"]] == [[i] for i in range(3, 13)]
    assert y["first_mismatches"][0]["got"] == 0.0
    assert y["first_mismatches"][0]["expected"] == float(expected[3])
    assert "common_ratio" not in y

    text = (folder / "report.md").read_text()
    assert "TileLang version: 0.1.15" in text
    assert f"pass configs: `{BASELINE}=true`" in text
    assert "`y`: 13 of 16 elements wrong (13 of them 0)" in text
    assert "`A`: all 16000 elements within bound" in text
    assert f"| (3,) | 0.0 | {float(expected[3])} |" in text
    assert ("verify-reducer run program.py --func main --backend tilelang --inputs "
            f"inputs.npz --tilelang-config {BASELINE}=true") in text


def test_the_reports_command_reproduces_it(capsys, monkeypatch, tmp_path):
    fake = FakeTileLang(respond=zeros_after_three)
    fake.install(monkeypatch)
    run_cli(capsys, "run", GEMV, "--backend", "tilelang", "--seed", "7",
            "--tilelang-config", f"{BASELINE}=true", "--bug-report", str(tmp_path))
    folder = the_folder(tmp_path)
    command = json.loads((folder / "report.json").read_text())["command"]
    monkeypatch.chdir(folder)
    words = shlex.split(command)
    assert words[0] == "verify-reducer"
    code, out, _ = run_cli(capsys, *words[1:])
    assert code == 3 and "tilelang MISMATCH y[3]" in out
    assert fake.compiled[1] == fake.compiled[0]
    assert all(np.array_equal(fake.ran[1][n], fake.ran[0][n]) for n in fake.ran[0])


@pytest.mark.parametrize("factor", [2.0, 16.0])
def test_a_value_counted_k_times_is_named(capsys, monkeypatch, tmp_path, factor):
    FakeTileLang(respond=lambda arrays: {"out": [36.0 * factor]}).install(monkeypatch)
    code, _, _ = run_cli(capsys, "run", MINIMAL, "--backend", "tilelang",
                         "--bug-report", str(tmp_path))
    assert code == 3
    text = (the_folder(tmp_path) / "report.md").read_text()
    assert f"got = {factor:g} x expected at every mismatch" in text
    assert "pass configs: none (TileLang defaults)" in text


def test_an_agreement_writes_nothing(capsys, monkeypatch, tmp_path):
    FakeTileLang(respond=truth(MINIMAL)).install(monkeypatch)
    code, out, _ = run_cli(capsys, "run", MINIMAL, "--backend", "tilelang",
                           "--bug-report", str(tmp_path))
    assert code == 0 and "bug report" not in out
    assert list(tmp_path.iterdir()) == []
    loaded = pipeline.load(MINIMAL)
    outcome = bugreport.compare_with_tilelang(loaded, loaded.inputs(0),
                                              pipeline.tilelang_setup())
    assert not outcome.disagrees
    with pytest.raises(ValueError, match="nothing to report"):
        bugreport.write_report(outcome, str(tmp_path))


def test_one_disagreement_one_folder(capsys, monkeypatch, tmp_path):
    FakeTileLang(respond=lambda arrays: {"out": [0.0]}).install(monkeypatch)
    for _ in range(2):
        run_cli(capsys, "run", MINIMAL, "--backend", "tilelang", "--bug-report",
                str(tmp_path))
    assert len(list(tmp_path.iterdir())) == 1
    run_cli(capsys, "run", MINIMAL, "--backend", "tilelang", "--bug-report",
            str(tmp_path), "--tilelang-config", f"{BASELINE}=true")
    assert len(list(tmp_path.iterdir())) == 2


def test_a_bug_report_folder_that_is_a_file_exits_2(capsys, tmp_path):
    target = tmp_path / "taken"
    target.write_text("")
    code, _, err = run_cli(capsys, "run", MINIMAL, "--backend", "tilelang",
                           "--bug-report", str(target))
    assert code == 2 and "--bug-report" in err and "not a directory" in err


# ----------------------------------------------------------------------------- refusals

@pytest.mark.parametrize("stage, kind", [("compile", "refused"), ("run", "crashed")])
def test_tilelang_failing_is_reported_with_its_message_and_stage(capsys, monkeypatch,
                                                                 tmp_path, stage, kind):
    message = ("XOR-butterfly AllReduce requires logical_width (96) to be a power of "
               "two\nStack trace:\n  0: tl::ReducerPlan")
    FakeTileLang(fail_at=stage, failure=RuntimeError(message)).install(monkeypatch)
    code, out, _ = run_cli(capsys, "run", MINIMAL, "--backend", "tilelang", "--json",
                           "--tilelang-config", f"{BASELINE}=true",
                           "--bug-report", str(tmp_path))
    doc = json.loads(out)
    assert code == 3 and doc["tilelang_error"]["stage"] == stage
    folder = Path(doc["bug_report"])
    assert folder.parent == tmp_path and folder.name.startswith(f"tilelang-main-{kind}-")
    assert {p.name for p in folder.iterdir()} == FILES              # no got.npz
    facts = json.loads((folder / "report.json").read_text())
    assert facts["tilelang_error"] == {"stage": stage,
                                       "message": f"RuntimeError: {message}"}
    assert facts["kind"] == kind
    assert facts["summary"] == (f"tilelang {kind} ({stage} stage): RuntimeError: "
                                "XOR-butterfly AllReduce requires logical_width (96) to "
                                "be a power of two")
    text = (folder / "report.md").read_text()
    assert f"## TileLang failed at its {stage} stage" in text
    assert "Stack trace:\n  0: tl::ReducerPlan" in text
    assert load_npz(folder / "expected.npz")["out"].tolist() == [36.0]


def test_the_text_report_of_a_refusal_names_the_setup_and_the_folder(capsys, monkeypatch,
                                                                     tmp_path):
    FakeTileLang(fail_at="compile").install(monkeypatch)
    code, out, err = run_cli(capsys, "run", MINIMAL, "--backend", "tilelang",
                             "--bug-report", str(tmp_path))
    assert code == 3 and "compile stage" in err
    assert "tilelang 0.1.15; pass configs: none (defaults)" in out
    assert f"bug report: {the_folder(tmp_path)}" in out


# ----------------------------------------------------------------------------- shrinking

def _outcome(path: str, monkeypatch) -> bugreport.TileLangOutcome:
    FakeTileLang(respond=lambda arrays: {"out": [576.0]}).install(monkeypatch)
    loaded = pipeline.load(path)
    return bugreport.compare_with_tilelang(loaded, loaded.inputs(0),
                                           pipeline.tilelang_setup({BASELINE: "true"}))


def test_a_shrinker_replaces_the_program_and_keeps_the_original(monkeypatch, tmp_path):
    outcome = _outcome(MINIMAL, monkeypatch)
    shrunk_path = tmp_path / "shrunk.py"
    shrunk_path.write_text("".join(line for line in outcome.loaded.source.splitlines(True)
                                   if not line.startswith("#") or "input:" in line))
    handed = []

    def shrink(given):
        handed.append(given)
        loaded = pipeline.load(str(shrunk_path))
        return bugreport.compare_with_tilelang(loaded, loaded.inputs(0), given.setup)

    folder = Path(bugreport.write_report(outcome, str(tmp_path / "reports"), shrink))
    assert handed == [outcome]
    assert (folder / "program.py").read_text() == shrunk_path.read_text()
    assert (folder / "original.py").read_text() == Path(MINIMAL).read_text()
    facts = json.loads((folder / "report.json").read_text())
    assert facts["shrunk"] and facts["original_program"] == str(shrunk_path)
    assert "shrunk from `original.py`" in (folder / "report.md").read_text()


def test_a_shrinker_that_finds_nothing_leaves_the_report_as_it_is(monkeypatch, tmp_path):
    outcome = _outcome(MINIMAL, monkeypatch)
    folder = Path(bugreport.write_report(outcome, str(tmp_path), lambda o: None))
    assert not (folder / "original.py").exists()
    assert not json.loads((folder / "report.json").read_text())["shrunk"]


# ----------------------------------------------------------------------------- built apart

def test_a_report_built_in_one_process_is_saved_in_another(monkeypatch, tmp_path):
    # a fuzzing worker builds the report where TileLang ran; the campaign saves it
    outcome = _outcome(MINIMAL, monkeypatch)
    built = pickle.loads(pickle.dumps(bugreport.build_report(
        outcome, origin="case 3 of `verify-reducer fuzz --seed 1`")))
    folder = Path(bugreport.save_report(built, str(tmp_path / "saved")))
    direct = Path(bugreport.write_report(outcome, str(tmp_path / "direct")))
    assert folder.name == direct.name
    assert {p.name for p in folder.iterdir()} == {p.name for p in direct.iterdir()}
    assert (folder / "program.py").read_text() == Path(MINIMAL).read_text()
    assert np.array_equal(load_npz(folder / "got.npz")["out"], [576.0])
    facts = json.loads((folder / "report.json").read_text())
    assert facts["original_program"] == "case 3 of `verify-reducer fuzz --seed 1`"
    assert facts["pass_configs"] == {BASELINE: True}
    assert facts["tilelang_version"] == "0.1.15"
