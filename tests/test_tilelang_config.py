"""`--tilelang-config KEY=VALUE`: parsed like a Python pass config, checked against the
keys TileLang registers before the program file runs, and handed to tilelang.compile.
TileLang is faked (tests/fake_tilelang.py): it records the pass configs it was given."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from verify_reducer.codegen import tilelang_backend
from verify_reducer.codegen.tilelang_backend import (PassConfigError, parse_config_assignment,
                                      parse_config_value, resolve_pass_configs)
from verify_reducer.verify.cli.commands import main

from fake_tilelang import KNOWN_CONFIGS, FakeTileLang

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = str(ROOT / "examples" / "minimal_legacy.py")
BASELINE = "tl.reducer_force_baseline"


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def agreeing(monkeypatch, **kwargs) -> FakeTileLang:
    fake = FakeTileLang(respond=lambda arrays: {"out": [36.0]}, **kwargs)
    fake.install(monkeypatch)
    return fake


# ----------------------------------------------------------------------------- parsing

@pytest.mark.parametrize("text, value", [
    ("true", True), ("False", False), ("0", 0), ("-12", -12), ("1.5", 1.5),
    ("2e3", 2000.0), ("io-aware", "io-aware"), ("", ""), ("1.2.3", "1.2.3"),
    ('{"enable_simplify_let_inline": false}', {"enable_simplify_let_inline": False}),
    ('["-DX=1", "-O3"]', ["-DX=1", "-O3"]),
])
def test_values_parse_like_python_pass_configs(text, value):
    parsed = parse_config_value(text)
    assert parsed == value and type(parsed) is type(value)


def test_broken_json_is_refused():
    with pytest.raises(PassConfigError, match="starts like JSON"):
        parse_config_value("{oops")


@pytest.mark.parametrize("text", ["tl.reducer_force_baseline", "=true", "a b=1"])
def test_an_assignment_needs_a_key_and_an_equals_sign(text):
    with pytest.raises(ValueError, match="expected KEY=VALUE"):
        parse_config_assignment(text)


def test_the_value_keeps_everything_after_the_first_equals_sign():
    assert parse_config_assignment(" tl.device_compile_flags = -DX=1 ") == \
        ("tl.device_compile_flags", "-DX=1")


@pytest.mark.parametrize("key, text, value", [
    (BASELINE, "true", True), (BASELINE, "1", True), (BASELINE, "0", False),
    ("tl.config_index_bitwidth", "64", 64),
    # TileLang 0.1.15 registers switches such as tl.reducer_force_baseline as IntImm
    ("tl.config_index_bitwidth", "true", 1),
    ("tl.pass_profile_threshold_ms", "3", 3.0),
    ("tl.layout_cost_model", "123", "123"),             # a string key keeps the text
    ("tl.device_compile_flags", "-I/opt/x -DY=1", ["-I/opt/x", "-DY=1"]),
    ("tl.Simplify", '{"enable_simplify_let_inline": false}',
     {"enable_simplify_let_inline": False}),
])
def test_values_take_the_type_tilelang_registers(key, text, value):
    resolved = resolve_pass_configs({key: text}, KNOWN_CONFIGS)[key]
    assert resolved == value and type(resolved) is type(value)


@pytest.mark.parametrize("key, text, expected", [
    (BASELINE, "yes", "true or false"), (BASELINE, "2", "true or false"),
    ("tl.config_index_bitwidth", "yes", "an integer"),
    ("tl.config_index_bitwidth", "6.5", "an integer"),
    ("tl.pass_profile_threshold_ms", "fast", "a number"),
])
def test_a_value_of_the_wrong_type_is_refused(key, text, expected):
    with pytest.raises(PassConfigError, match=f"{key} takes {expected}"):
        resolve_pass_configs({key: text}, KNOWN_CONFIGS)


def test_an_unknown_key_names_the_known_ones_and_the_closest():
    with pytest.raises(PassConfigError) as info:
        resolve_pass_configs({"tl.reducer_force_basline": "true"}, KNOWN_CONFIGS)
    message = str(info.value)
    assert "no pass config 'tl.reducer_force_basline'" in message
    assert f"did you mean {BASELINE}?" in message
    assert all(key in message for key in KNOWN_CONFIGS)


def test_without_a_key_list_values_are_parsed_from_their_text():
    assert resolve_pass_configs({"tl.anything": "true", "n": "4"}, None) == \
        {"tl.anything": True, "n": 4}


# ----------------------------------------------------------------------------- the CLI

def test_the_flag_reaches_tilelang_compile(capsys, monkeypatch):
    fake = agreeing(monkeypatch)
    code, out, _ = run_cli(capsys, "run", MINIMAL, "--backend", "tilelang",
                           "--tilelang-config", f"{BASELINE}=true",
                           "--tilelang-config", "tl.config_index_bitwidth=64")
    assert code == 0, out
    assert fake.compiled == [{"out_idx": None, "target": "cuda", "pass_configs": {
        BASELINE: True, "tl.config_index_bitwidth": 64}, "compile_flags": ["-fmad=false"]}]
    assert "tilelang == interpreter" in out
    assert ("tilelang 0.1.15; pass configs: tl.reducer_force_baseline=True, "
            "tl.config_index_bitwidth=64") in out


def test_without_the_flag_compile_gets_no_pass_configs(capsys, monkeypatch):
    fake = agreeing(monkeypatch)
    code, out, _ = run_cli(capsys, "run", MINIMAL, "--backend", "tilelang")
    assert code == 0
    assert fake.compiled[0]["pass_configs"] is None
    assert "pass configs: none (defaults)" in out


def test_json_names_the_version_and_the_configs(capsys, monkeypatch):
    agreeing(monkeypatch, version="0.1.15+cu128")
    code, out, _ = run_cli(capsys, "run", MINIMAL, "--backend", "tilelang", "--json",
                           "--tilelang-config", f"{BASELINE}=1")
    doc = json.loads(out)
    assert code == 0 and doc["exit_code"] == 0
    assert doc["tilelang"] == {"version": "0.1.15+cu128", "pass_configs": {BASELINE: True}}
    assert doc["comparisons"]["tilelang"][1]["ok"]


def test_an_unknown_key_exits_2_before_the_program_runs(capsys, monkeypatch):
    fake = agreeing(monkeypatch)

    def refuse(path):
        raise AssertionError(f"{path} was executed")
    monkeypatch.setattr(tilelang_backend, "load_program_module", refuse)
    code, out, err = run_cli(capsys, "run", MINIMAL, "--backend", "tilelang",
                             "--tilelang-config", "tl.force_baseline=true")
    assert code == 2 and out == "" and fake.compiled == []
    assert "TileLang has no pass config 'tl.force_baseline'" in err
    assert BASELINE in err
    code, out, _ = run_cli(capsys, "run", MINIMAL, "--backend", "tilelang", "--json",
                           "--tilelang-config", "tl.force_baseline=true")
    assert code == 2 and "tl.force_baseline" in json.loads(out)["error"]


def test_a_wrong_typed_value_exits_2(capsys, monkeypatch):
    agreeing(monkeypatch)
    code, _, err = run_cli(capsys, "run", MINIMAL, "--backend", "tilelang",
                           "--tilelang-config", f"{BASELINE}=maybe")
    assert code == 2 and f"{BASELINE} takes true or false" in err


def test_keys_from_tilelangs_enum_when_tvm_cannot_list_them(capsys, monkeypatch):
    fake = agreeing(monkeypatch, listing="enum")
    code, _, err = run_cli(capsys, "run", MINIMAL, "--backend", "tilelang",
                           "--tilelang-config", "tl.nope=1")
    assert code == 2 and BASELINE in err
    assert "enable_simplify_let_inline" not in err      # a sub-key of tl.Simplify
    code, _, _ = run_cli(capsys, "run", MINIMAL, "--backend", "tilelang",
                         "--tilelang-config", f"{BASELINE}=true")
    assert code == 0 and fake.compiled[-1]["pass_configs"] == {BASELINE: True}


def test_when_tilelang_cannot_list_its_keys_they_pass_through(capsys, monkeypatch):
    fake = agreeing(monkeypatch, listing=None)
    code, _, _ = run_cli(capsys, "run", MINIMAL, "--backend", "tilelang",
                         "--tilelang-config", "tl.future_key=2")
    assert code == 0 and fake.compiled[0]["pass_configs"] == {"tl.future_key": 2}


@pytest.mark.parametrize("flag", ["tl.reducer_force_baseline", "=1"])
def test_a_malformed_flag_is_a_usage_error(capsys, flag):
    with pytest.raises(SystemExit) as info:
        main(["run", MINIMAL, "--backend", "tilelang", "--tilelang-config", flag])
    assert info.value.code == 2
    assert "expected KEY=VALUE" in capsys.readouterr().err


def test_a_key_given_twice_is_a_usage_error(capsys, monkeypatch):
    agreeing(monkeypatch)
    code, _, err = run_cli(capsys, "run", MINIMAL, "--backend", "tilelang",
                           "--tilelang-config", f"{BASELINE}=true",
                           "--tilelang-config", f"{BASELINE}=false")
    assert code == 2 and f"--tilelang-config {BASELINE} given twice" in err


@pytest.mark.parametrize("flags", [["--tilelang-config", f"{BASELINE}=true"],
                                   ["--bug-report", "reports"]])
def test_tilelang_flags_need_the_tilelang_backend(capsys, flags):
    code, _, err = run_cli(capsys, "run", MINIMAL, "--backend", "sim", *flags)
    assert code == 2 and f"{flags[0]} applies to --backend tilelang only" in err


def test_without_tilelang_the_flag_still_exits_2_for_the_missing_tilelang(capsys,
                                                                         monkeypatch):
    monkeypatch.setitem(sys.modules, "tilelang", None)
    code, _, err = run_cli(capsys, "run", MINIMAL, "--backend", "tilelang",
                           "--tilelang-config", f"{BASELINE}=true")
    assert code == 2 and "TileLang is not installed" in err
