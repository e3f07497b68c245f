"""codegen.ptxas.compile_figures turns every way nvcc can fail on a unit into PtxasFailed
with the reason: refused, crashed (fuzz seed 2031 case 405: NVVM's segmentation fault), or
still running at COMPILE_TIMEOUT_S. The command is replaced by a shell stand-in, so no
nvcc is needed."""
from __future__ import annotations

import pytest

from verify_reducer.codegen import ptxas


def _stand_in(monkeypatch, script: str) -> None:
    monkeypatch.setattr(ptxas, "command", lambda unit, cubin, arch:
                        ["sh", "-c", script])


def test_a_crash_is_a_failure_with_its_output(monkeypatch):
    _stand_in(monkeypatch, "echo 'Segmentation fault' >&2; exit 139")
    with pytest.raises(ptxas.PtxasFailed, match="^Segmentation fault$"):
        ptxas.compile_figures("extern \"C\" __global__ void k() {}")


def test_a_compile_past_the_time_limit_is_a_failure(monkeypatch):
    monkeypatch.setattr(ptxas, "COMPILE_TIMEOUT_S", 1)
    _stand_in(monkeypatch, "sleep 30 & sleep 30")     # a child of its own holds the pipe too
    with pytest.raises(ptxas.PtxasFailed, match="nvcc did not finish in 1 s"):
        ptxas.compile_figures("extern \"C\" __global__ void k() {}")


def test_figures_come_from_the_verbose_output(monkeypatch):
    _stand_in(monkeypatch, "cat <<'EOF'\n"
              "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
              "ptxas info    : Function properties for k\n"
              "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
              "ptxas info    : Used 12 registers, used 0 barriers\n"
              "EOF")
    (figures,) = ptxas.compile_figures("").values()
    assert (figures.kernel, figures.registers, figures.stack_bytes) == ("k", 12, 0)
