"""The fuzzer's user-declared reducer ops (verify.fuzzing.user_ops): --user-ops 0 leaves
every program as it was; --user-ops 1 swaps every eligible reducer, and a small campaign
of such programs agrees with the numpy model on the simulator and nvcc."""
import json

import numpy as np
import pytest

from cuda_env import requires_nvcc
from fake_tilelang import FakeTileLang
from test_cli_conventions import assert_valid
from verify_reducer.verify.cli.commands import main
from verify_reducer.verify.fuzzing import judge as judge_mod
from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.fuzzing.campaign import kernel_of
from verify_reducer.verify.fuzzing.grammar import draw
from verify_reducer.verify.fuzzing.judge import judge
from verify_reducer.verify.fuzzing.minimize import minimize
from verify_reducer.verify.fuzzing.program import render
from verify_reducer.verify.fuzzing.user_ops import eligible


def test_default_programs_unchanged():
    for case in range(12):
        plain = draw(np.random.default_rng([3, case]))
        assert render(kernel_of(3, case)) == render(plain)
        assert render(kernel_of(3, case, 0.0)) == render(plain)
        assert "reducer_op" not in render(plain)


def test_swap_keeps_other_draws():
    for case in range(12):
        plain, swapped = kernel_of(5, case), kernel_of(5, case, 1.0)
        assert (plain.grid, plain.mode, plain.input_seed) == \
            (swapped.grid, swapped.mode, swapped.input_seed)
        for a, b in zip(plain.reducers, swapped.reducers):
            assert (a.dtype, a.op, a.value) == (b.dtype, b.op, b.value)
            assert (b.user_op is not None) == eligible(a)


def _user_cases(seed: int, want: int):
    cases = []
    case = 0
    while len(cases) < want:
        k = kernel_of(seed, case, 1.0)
        if any(r.user_op for r in k.reducers):
            cases.append(k)
        case += 1
    return cases


@pytest.mark.parametrize("backends", [("sim",), pytest.param(("sim", "nvcc"),
                                                               marks=requires_nvcc)])
def test_user_op_campaign_has_no_findings(backends):
    count = 30 if backends == ("sim",) else 10
    for k in _user_cases(11, count):
        text = render(k)
        assert "@T.reducer_op(" in text
        assert judge(k, backends) is None, text


def test_tilelang_skips_programs_that_declare_an_op(monkeypatch):
    def refuse(*args):
        raise AssertionError("a user-op program reached TileLang")
    monkeypatch.setattr(judge_mod, "judge_tilelang", refuse)
    k = _user_cases(2, 1)[0]
    assert judge(k, ("sim", "tilelang")) is None


def test_cli_fuzz_user_ops(tmp_path, capsys):
    code = main(["fuzz", "--count", "4", "--seed", "11", "--user-ops", "1",
                 "--jobs", "1", "--out", str(tmp_path), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["findings"] == [] and code == pipeline.EXIT_OK
    assert doc["user_ops"] == 1.0
    assert_valid(doc)                          # verify_reducer/schemas/fuzz.schema.json


@pytest.mark.parametrize("bad", ["1.5", "-0.1", "often"])
def test_cli_fuzz_user_ops_must_be_a_probability(bad, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["fuzz", "--user-ops", bad, "--out", str(tmp_path)])
    assert exc.value.code == 2
    assert "probability" in capsys.readouterr().err


def test_minimize_may_restore_the_builtin_op():
    k = _user_cases(11, 1)[0]
    # a finding that does not depend on the declared op: the minimizer drops it
    small = minimize(k, ("mismatch",), lambda candidate: ("mismatch",), 200)
    assert all(r.user_op is None for r in small.reducers)
    # one that does: it stays
    keep = minimize(k, ("mismatch",), lambda c: ("mismatch",) if any(
        r.user_op for r in c.reducers) else None, 200)
    assert any(r.user_op for r in keep.reducers)


def test_cli_fuzz_tilelang_says_user_op_programs_skip_it(tmp_path, monkeypatch, capsys):
    FakeTileLang().install(monkeypatch)
    code = main(["fuzz", "--backend", "tilelang", "--user-ops", "1", "--count", "1",
                 "--seed", "11", "--jobs", "1", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "skip TileLang (it refuses T.reducer_op)" in out
    assert code in (pipeline.EXIT_OK, pipeline.EXIT_MISMATCH)
