"""Every program in examples/ computes what its numpy ground truth (tests/references.py)
says it computes: the logical interpreter's outputs are compared, element by element,
with the reference on the header's inputs and on seeded inputs. Integers must match
exactly; floats must lie within the interpreter's own reassociation bound
(docs/semantics.md §9), and that bound must be finite and not vacuous.

Also checked without the interpreter: the `# expect: result` values written in each
header agree with the reference, and every `# expect: error RXXX at LINE` of the invalid
test programs and of the refused examples (examples/refused/) points at the line marked
`# <- RXXX`."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.verify.oracle.expect import parse_expectation

from references import REFERENCES

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(ROOT.glob("examples/*.py"))
# examples of what check refuses (examples/refused/) carry their errors like invalid programs
INVALID = sorted([*ROOT.glob("tests/programs/invalid/*.py"),
                  *ROOT.glob("examples/refused/*.py")])
SEEDS = [0, 1, 2]


def _name(path: Path) -> str:
    return path.stem


def _parse(path: Path):
    try:
        from verify_reducer.spec.frontend import parse_file
    except ImportError:                      # the frontend's file-level entry point
        from verify_reducer.spec.frontend import parse_source

        def parse_file(p):
            return parse_source(Path(p).read_text(), str(p))
    return parse_file(str(path))


def _describe(name, got, want, bound, ok, limit=5) -> str:
    bad = np.argwhere(~ok)
    lines = [f"{name}: {len(bad)} of {ok.size} elements differ from the reference"]
    for idx in bad[:limit]:
        idx = tuple(int(i) for i in idx)
        lines.append(f"  {name}{list(idx)}: interpreter {got[idx]!r}, reference "
                     f"{want[idx]!r}, bound {bound[idx]!r}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- static


def test_every_example_has_a_reference():
    names = {_name(p) for p in EXAMPLES}
    assert names, "examples/ is empty"
    assert names == set(REFERENCES), (
        f"examples without a reference: {sorted(names - set(REFERENCES))}; "
        f"references without an example: {sorted(set(REFERENCES) - names)}")


@pytest.mark.parametrize("path", EXAMPLES, ids=_name)
def test_header_results_agree_with_reference(path: Path):
    """The `# expect: result` lines were computed by hand; the reference must agree."""
    exp = parse_expectation(path.read_text(), str(path))
    assert exp.ok and not exp.errors, f"{path.name}: every example must be '# expect: ok'"
    if not exp.results:
        return
    ref = REFERENCES[_name(path)].outputs(exp.inputs)
    for name, header in exp.results.items():
        want = np.asarray(ref[name])
        header = np.asarray(header).reshape(want.shape)
        if want.dtype.kind == "f":            # examples' float outputs are float32
            same = want.astype(np.float32) == header.astype(np.float32)
        else:
            same = want.astype(np.int64) == header.astype(np.int64)
        assert same.all(), f"{path.name}: header says {name}={header.tolist()}, " \
                           f"the reference computes {want.tolist()}"


@pytest.mark.parametrize("path", INVALID, ids=_name)
def test_invalid_program_lines_are_marked(path: Path):
    """Each expected error's line carries the `# <- RXXX` marker, and vice versa."""
    text = path.read_text()
    lines = text.splitlines()
    exp = parse_expectation(text, str(path))
    assert exp.errors, f"{path.name} expects no error"
    marked = sorted((m.group(1), n) for n, line in enumerate(lines, 1)
                    for m in re.finditer(r"# <- (R\d{3})", line))
    header = sorted((code, line) for code, line, _ in exp.errors)
    assert header == marked, f"{path.name}: header {header}, marked lines {marked}"


# ----------------------------------------------------------------------------- interpreter


def _cases():
    for path in EXAMPLES:
        yield pytest.param(path, None, id=f"{_name(path)}-header")
        for seed in SEEDS:
            yield pytest.param(path, seed, id=f"{_name(path)}-seed{seed}")


@pytest.mark.parametrize("path, seed", list(_cases()))
def test_interpreter_matches_reference(path: Path, seed: int | None):
    from verify_reducer.interp.accept import within_bound
    from verify_reducer.interp.logical import run
    from verify_reducer.verify.oracle.inputs import prepare

    ref = REFERENCES[_name(path)]
    func = _parse(path).func()
    if seed is None:
        given = parse_expectation(path.read_text(), str(path)).inputs
        if not given:
            pytest.skip("the header gives no inputs (covered by the seeded cases)")
        values = prepare(func, 0, given)
    else:
        rng = np.random.default_rng([seed, 20240])
        values = prepare(func, seed, ref.inputs(rng) if ref.inputs else None)

    result = run(func, {k: v.copy() for k, v in values.items()})
    expected = ref.outputs(values)
    failures = []
    for name, want in expected.items():
        got = np.asarray(result.outputs[name])
        bound = np.broadcast_to(np.asarray(result.bounds[name], np.float64), got.shape)
        want = np.asarray(want).reshape(got.shape)
        if got.dtype.kind in "iub":
            assert (bound == 0).all(), f"{name}: an integer output must be exact, " \
                                       f"bound {bound.tolist()}"
        else:
            # The bound must be able to judge: finite, and far below the output's scale
            # (a sanity check on the bound, not the acceptance test, which follows).
            scale = max(1.0, float(np.max(np.abs(want[np.isfinite(want)]), initial=0.0)))
            assert np.isfinite(bound).all(), f"{name}: bound {bound.tolist()}"
            assert (bound <= 1e-2 * scale).all(), (
                f"{name}: the bound is vacuous: {bound.tolist()} for {want.tolist()}")
        ok = within_bound(got, want, bound)
        if not ok.all():
            failures.append(_describe(name, got, want, bound, ok))
    assert not failures, f"{path.name} (seed {seed}):\n" + "\n".join(failures)
