"""SIMT-style programs through real TileLang on the GPU (issue 25): the meaning
docs/semantics.md §2 gives threads= tuples, thread-private T.alloc_local/T.alloc_var,
a T.Parallel that stores only to locals at indices without its variables (every thread
runs every iteration; a local indexed by the loop variable TileLang refuses), T.reduce_*
of a local source, the warp shuffles and tl::warp_reduce's butterfly order is read from
TileLang's source; these runs decide it. Each tests/programs/valid/simt_*.py program
(and threads_tuple.py) runs on its header's inputs through `run --backend tilelang`
and must equal the interpreter — bit for bit where the interpreter is exact, which it is
for every one of them (integer results, and float sums whose order the program fixes).
Our own CUDA of the same programs runs in tests/test_cuda_gpu.py (every valid program).

Run on the GPU machine: pytest -m gpu tests/test_gpu_simt.py"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.codegen import tilelang_backend
from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.oracle.expect import parse_expectation

ROOT = Path(__file__).resolve().parent.parent
VALID = ROOT / "tests" / "programs" / "valid"
PROGRAMS = sorted(VALID.glob("simt_*.py")) + [VALID / "threads_tuple.py"]


@lru_cache(maxsize=1)
def _tilelang_problem() -> str | None:
    return tilelang_backend.unavailable_reason()


pytestmark = [pytest.mark.gpu, pytest.mark.tilelang,
              pytest.mark.skipif(_tilelang_problem() is not None,
                                 reason=_tilelang_problem() or "")]


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_tilelang_gives_the_simt_meaning(path):
    expected = parse_expectation(path.read_text(), str(path))
    loaded = pipeline.load(str(path))
    values = loaded.inputs(0, expected.inputs or None)
    run = pipeline.run_backend(loaded, "tilelang", values)
    reference = pipeline.oracle(loaded, values)
    for name, want in expected.results.items():
        np.testing.assert_array_equal(np.asarray(run.outputs[name]).reshape(-1),
                                      np.asarray(want).reshape(-1),
                                      err_msg=f"{path.name}: TileLang's {name}")
    bad = [c for c in pipeline.compare_outputs(run.outputs, reference) if not c.ok]
    assert not bad, f"TileLang disagrees with the interpreter: {bad}"
