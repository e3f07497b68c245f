"""A plain read-modify-write of one element from several threads or blocks loses
updates; the verifier says so, naming the interleaving (issue 27). Across blocks it is
R504 (verify/oracle/block_races.py, tests/test_blocks.py); within a T.Parallel the
interpreter's race check (R102) says it is a read-modify-write."""
from __future__ import annotations

from pathlib import Path

from verify_reducer.verify.oracle import pipeline

PROGRAMS = Path(__file__).parent / "programs" / "races"


def _errors(path: Path):
    return [d for d in pipeline.check(str(path)).diagnostics if d.is_error]


def test_a_read_modify_write_in_a_parallel_loop_spells_the_interleaving():
    (found,) = _errors(PROGRAMS / "parallel_read_modify_write.py")
    assert (found.code, found.span.line) == ("R102", 17)
    assert found.message.endswith(
        ": a race; a read-modify-write by several iterations: both read s[0], then both "
        "store it, and one update is lost (T.atomic_add makes each update indivisible)")


def test_a_store_that_does_not_read_its_destination_is_a_plain_race(tmp_path):
    path = tmp_path / "store.py"
    path.write_text((PROGRAMS / "parallel_read_modify_write.py").read_text()
                    .replace("s[0] = s[0] + X[j]", "s[0] = X[j]"))
    (found,) = _errors(path)
    assert found.code == "R102" and found.message.endswith("to s[0]: a race")


def test_a_read_modify_write_from_several_blocks_is_r504():
    (found,) = _errors(PROGRAMS / "blocks_read_modify_write.py")
    assert (found.code, found.span.line) == ("R504", 16)
    assert "both reach Out[0] in block (0,) and block (1,); a read-modify-write from " \
        "several blocks" in found.message
