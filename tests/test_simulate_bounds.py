"""R505: every address the simulator executes is checked against its allocation, and
faults planted into correct plans (dataclasses.replace of one piece) come back naming
the statement, the thread, the index and the allocation's extent: a workspace address
shifted past the workspace (each of the three workspace steps), a chunk shifted past
the partial array, a storage or fragment layout narrower than its buffer (slots past
the register array), copies that run past a shared tile or a fragment, and a global
read on a side the kernel does not test.
The faults go into the transpose all-reduce (planner "transpose", the canonical plan's
fallback), whose chunks, workspace reductions and broadcasts have the most to break; the
segmented finalize's own faults are in test_segmented."""
from __future__ import annotations

from dataclasses import replace

import pytest

from verify_reducer.spec.layout import default_partition, fully_replicated
from verify_reducer.spec.physical import FromWorkspace, ReduceWorkspace, ToWorkspace

from test_simulate_faults import _codes, _plan, _with_finalize, _with_reducer, _with_steps

BATCH = "tests/programs/valid/batch_hint.py"     # acc: 16 slots, 1028-word workspace


def _r505(result) -> list:
    return [d for d in result.violations if d.code == "R505"]


def _shifted(kind, words: int):
    """Every step of kind in the chunk addresses `words` further on."""
    field = "dst" if kind is ReduceWorkspace else "addr"
    def change(steps):
        return [replace(st, **{field: getattr(st, field) + words})
                if isinstance(st, kind) else st for st in steps]
    return change


@pytest.mark.parametrize("kind, expected", [
    (ToWorkspace, "workspace write acc_workspace[1028] by thread 0 (slot 12, chunk slots "
                  "12..15, step 0: ToWorkspace) is outside acc_workspace[1028]"),
    (ReduceWorkspace, "workspace write acc_workspace[2052] by thread 0 (chunk slots "
                      "12..15, step 2: ReduceWorkspace) is outside acc_workspace[1028]"),
    (FromWorkspace, "workspace read acc_workspace[2052] by thread 0 (slot 12, term 0, "
                    "chunk slots 12..15, step 4: FromWorkspace) is outside "
                    "acc_workspace[1028]"),
])
def test_workspace_address_past_the_workspace_is_r505(kind, expected):
    func, plan = _plan(BATCH)
    words = plan.reducers[0].workspace_words
    assert words == 1028
    codes, result = _codes(func, _with_steps(plan, _shifted(kind, words), chunk=3))
    (fault,) = _r505(result)
    assert expected in fault.message
    assert fault.span.line == 30                # the finalize
    # the step is not executed: its slots are never reduced
    assert "R503" in codes and "acc[12]" in " ".join(d.message for d in result.violations)


def test_negative_workspace_address_is_r505():
    func, plan = _plan(BATCH)
    codes, result = _codes(func, _with_steps(plan, _shifted(ToWorkspace, -2000)))
    (fault,) = _r505(result)
    assert "workspace write acc_workspace[-2000] by thread 0 (slot 0," in fault.message


def test_last_chunk_one_slot_late_runs_past_the_partials():
    func, plan = _plan(BATCH)
    def late(fp):
        chunks = list(fp.chunks)
        chunks[-1] = replace(chunks[-1], first=chunks[-1].first + 1)
        return replace(fp, chunks=tuple(chunks))
    codes, result = _codes(func, _with_finalize(plan, late))
    (fault,) = _r505(result)
    assert ("chunk 3 (slots 13..16) by thread 0 reaches partial slot 16, outside "
            "acc_partial[16]") in fault.message
    # slot 12 is covered by no chunk any more: its output is never reduced
    assert any(d.code == "R503" and "acc[12]" in d.message for d in result.violations)


def test_storage_narrower_than_the_reducer_puts_slots_past_the_partials():
    """A storage layout over 4 outputs for a 16-output reducer: its slot expression
    (slot = i) gives slot 4.. for outputs 4.., past the 4-slot array it declares."""
    func, plan = _plan(BATCH)
    narrow = _with_reducer(plan, lambda rp: replace(rp, storage=fully_replicated((4,), 256)))
    codes, result = _codes(func, narrow)
    faults = _r505(result)
    update = next(d for d in faults if d.span.line == 28)
    assert "update of acc[4] by thread 64 uses slot 4, outside acc_partial[4]" in \
        update.message
    chunk = next(d for d in faults if "chunk 2" in d.message)
    assert "reaches partial slot 8, outside acc_partial[4]" in chunk.message


def test_fragment_layout_narrower_than_its_buffer_is_r505():
    func, plan = _plan("examples/minimal_v2.py")
    x = next(b for b in plan.layouts.fragments if b.name == "x_frag")
    fragments = dict(plan.layouts.fragments)
    fragments[x] = fully_replicated((4,), 128)
    codes, result = _codes(func, replace(plan, layouts=replace(plan.layouts,
                                                               fragments=fragments)))
    assert set(codes) == {"R505"}                  # no R300 for the same lanes
    write, read = _r505(result)
    assert write.span.line == 19 and read.span.line == 24
    assert "register write of x_frag[4] by thread 4 uses slot 4, outside x_frag[4]" in \
        write.message
    assert "register read of x_frag[4] by thread 4" in read.message


# ---------------------------------------------------------------- copies and fills

TILE = '''
import tilelang.language as T

@T.prim_func
def main(x: T.Tensor((64,), T.float32), out: T.Tensor((64,), T.float32)):
    with T.Kernel(8, threads=128) as bx:
        s = T.alloc_shared((8,), T.float32)
        T.copy(x[bx * 8:bx * 8 + 8], s)
        T.copy(s, out[bx * 8:bx * 8 + 8])
'''


def _program(source: str, name: str):
    from verify_reducer.codegen.plan import plan_func
    from verify_reducer.spec.frontend import parse_source
    func = parse_source(source, name).func()
    return func, plan_func(func, "transpose")


def _r505_of_12_element_partition(func, plan, planted):
    """The one R505 of the plan with the copy `planted` picks given a partition of 12
    elements on 128 threads."""
    copy = next(c for c in plan.layouts.copies if planted(c))
    copies = dict(plan.layouts.copies)
    copies[copy] = default_partition((12,), 128)
    codes, result = _codes(func, replace(plan, layouts=replace(plan.layouts, copies=copies)))
    (fault,) = _r505(result)
    return fault


def test_copy_layout_overrunning_a_shared_tile_is_r505():
    """The copy x -> s planted with a partition of 12 elements: the kernel's loop over
    it would store s[8..11], past the 8-element shared tile."""
    fault = _r505_of_12_element_partition(*_program(TILE, "tile.py"),
                                          lambda c: c.dst.buffer.name == "s")
    assert fault.span.line == 8
    assert fault.message.startswith("shared write s[8] by thread 8 is outside s[8] "
                                    "(4 accesses of this statement)")


def test_copy_layout_overrunning_a_fragment_is_r505_not_a_crash():
    """The copy a -> out planted with a partition of 12 elements reads a[8..11] of an
    8-element fragment: R505, and those lanes are not read (no IndexError)."""
    from pathlib import Path
    source = (Path(__file__).parent / "programs/valid/copy_start_below_zero.py").read_text()
    fault = _r505_of_12_element_partition(*_program(source, "copy_start_below_zero.py"),
                                          lambda c: c.src.buffer.name == "a")
    assert fault.span.line == 18
    assert fault.message.startswith("fragment read a[8] by thread 8 is outside a[8]")


def test_unguarded_global_read_past_the_tensor_is_r505(monkeypatch):
    """A kernel that tests none of the tensor's borders (the guard decision planted to
    say no test is needed) reads x[-4] in block 0: R505, not TileLang's guarded 0."""
    import verify_reducer.codegen.lower.copies as lowered     # where copies take their guards
    from pathlib import Path
    source = (Path(__file__).parent / "programs/valid/copy_start_below_zero.py").read_text()
    func, plan = _program(source, "copy_start_below_zero.py")
    assert _codes(func, plan)[0] == []                       # guarded: in bounds
    monkeypatch.setattr(lowered, "border_guards",
                        lambda region, starts, shape, ranges:
                        tuple((False, False) for _ in region.buffer.shape))
    func, plan = _program(source, "copy_start_below_zero.py")    # fresh per-plan caches
    codes, result = _codes(func, plan)
    (fault,) = _r505(result)
    assert fault.span.line == 17
    assert fault.message == ("global read x[-4] by thread 0 is outside x[64] "
                             "(64 accesses of this statement) in block 0")


def test_the_renderer_tests_the_borders_the_simulator_assumes():
    """Both executors take border tests from spec.addressing.border_guards: a negative
    Let start gets its `>= 0` test, a run straddling the tensor's end stays scalar."""
    from pathlib import Path
    from verify_reducer.codegen.cuda import render
    root = Path(__file__).parent / "programs/valid"
    func, plan = _program((root / "copy_start_below_zero.py").read_text(), "a.py")
    assert "base + i >= 0 && base + i < 64 ? x[base + i] : 0.0f" in render(plan).source
    func, plan = _program((root / "copy_tail_not_vectorized.py").read_text(), "b.py")
    text = render(plan).source
    assert "4*bx + i < 10 ? x[4*bx + i] : 0.0f" in text
    assert "reinterpret_cast<const float4*>(&x[" not in text
