"""The fuzzer's user-declared reducer ops (verify.fuzzing.user_ops): --user-ops 0 leaves
every program as it was; --user-ops 1 swaps every eligible reducer, and a small campaign
of such programs agrees with the numpy model on the simulator and nvcc."""
import shutil

import numpy as np
import pytest

from verify_reducer.verify.fuzzing.campaign import kernel_of
from verify_reducer.verify.fuzzing.grammar import draw
from verify_reducer.verify.fuzzing.judge import judge
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


@pytest.mark.parametrize("backends", [("sim",), ("sim", "nvcc")])
def test_user_op_campaign_has_no_findings(backends):
    if "nvcc" in backends and shutil.which("nvcc") is None:
        pytest.skip("nvcc not installed")
    count = 30 if backends == ("sim",) else 10
    for k in _user_cases(11, count):
        text = render(k)
        assert "@T.reducer_op(" in text
        assert judge(k, backends) is None, text
