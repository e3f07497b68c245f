"""The segmented finalize (codegen.segmented) and storage in the update loop's layout
(codegen.storage): the plans they give the streaming GEMV, the cases that fall back, and
faults planted into the new steps, each caught by the simulator with its own code."""
from __future__ import annotations

import re

from dataclasses import replace
from pathlib import Path

import pytest

from verify_reducer.codegen.plan import plan_func
from verify_reducer.codegen.plan_canonical import plan_transpose
from verify_reducer.codegen.plan_sites import gather_reducers
from verify_reducer.codegen.layout import infer_layouts
from verify_reducer.codegen.segmented import NoSegments, cosets_match_replicas, segmented, shuffle_bits
from verify_reducer.interp.accept import within_bound
from verify_reducer.interp.logical import run
from verify_reducer.interp.simulate import simulate
from verify_reducer.spec.frontend import parse_file, parse_source
from verify_reducer.spec.indexexpr import Const, Var
from verify_reducer.spec.layout import Layout, fully_replicated
from verify_reducer.spec.physical import Publish, Shuffle, ToWorkspace
from verify_reducer.verify.oracle.inputs import prepare

ROOT = Path(__file__).resolve().parent.parent
GEMV = ROOT / "examples" / "gemv_pipelined.py"


def _func(path: Path):
    return parse_file(str(path)).func()


def _wide_gemv():
    """The GEMV at 32 x 512 on 256 threads (K = 1024): each row lives in 64 threads, two
    warps, so its publication combines two workspace words."""
    text = GEMV.read_text()
    for name, value in (("K", 1024), ("BLOCK_K", 512), ("THREADS", 256)):
        text = re.sub(rf"^{name} = \d+$", f"{name} = {value}", text, flags=re.M)
    return parse_source(text, "gemv_wide.py").func()


def _finalize(plan):
    (rp,) = plan.reducers
    (fp,) = rp.finalizes
    return rp, fp


def _agrees(func, plan, seed: int = 0) -> list[str]:
    inputs = prepare(func, seed)
    result = simulate(plan, inputs)
    reference = run(func, inputs)
    for name, exact in reference.outputs.items():
        assert within_bound(result.outputs[name], exact, reference.bounds[name]).all(), name
    return [d.code for d in result.violations]


# ----------------------------------------------------------------------------- the GEMV

def test_gemv_canonical_keeps_partials_in_the_loop_layout():
    """32 rows on 128 threads with the vectorized loop `thread = 8*(i % 16) + k // 8,
    slot = 8*(i // 16) + k % 8`: 2 partials per thread (not 32), row i in the 8 lanes
    8*(i % 16) .. +7 of one warp, so three shuffles, one store per 8 lanes, a 32-word
    workspace (16 lane groups x 2 slots), each output published from one word."""
    func = _func(GEMV)
    rp, fp = _finalize(plan_func(func, "canonical"))
    assert rp.storage.describe() == \
        "thread = 8*(i % 16) + rep, slot = i // 16, replicate 8 (threads 0..127)"
    assert rp.storage.slots_per_thread == 2 and rp.workspace_words == 32
    steps = fp.chunks[0].steps
    assert [s.mask for s in steps if isinstance(s, Shuffle)] == [1, 2, 4]
    (store,) = [s for s in steps if isinstance(s, ToWorkspace)]
    assert str(store.addr) == "2*(t // 8) + s" and str(store.guards[0].expr) == "t % 8"
    assert fp.publish.terms == 1
    assert str(fp.publish.addr) == "2*(i % 16) + i // 16"
    assert _agrees(func, plan_func(func, "canonical")) == []


def test_wide_gemv_publishes_each_row_from_the_two_warps_that_hold_it():
    func = _wide_gemv()
    rp, fp = _finalize(plan_func(func, "canonical"))
    assert rp.storage.describe() == \
        "thread = 64*(i % 4) + rep, slot = i // 4, replicate 64 (threads 0..255)"
    steps = fp.chunks[0].steps
    assert [s.mask for s in steps if isinstance(s, Shuffle)] == [1, 2, 4, 8, 16]
    assert fp.publish.terms == 2
    assert str(fp.publish.addr) == "16*(i % 4) + 8*term + i // 4"
    assert _agrees(func, plan_func(func, "canonical")) == []


def test_gemv_fast_plan_is_the_narrow_width_with_a_redistribution():
    """The groups of 8 threads hold 2 rows each, the destination wants every row in 4
    threads across the warps: the fast plan takes width 8 (not 128) and publishes."""
    func = _func(GEMV)
    rp, fp = _finalize(plan_func(func, "fast"))
    assert rp.planner == "fast" and fp.width == 8
    assert rp.storage.slots_per_thread == 2 and fp.publish is not None
    assert _agrees(func, plan_func(func, "fast")) == []


def test_register_words_of_the_partials_follow_the_loop():
    func = _func(GEMV)
    for planner in ("canonical", "fast"):
        words = {r.name: r.words for r in plan_func(func, planner).resources.registers
                 if r.what == "reducer partials"}
        assert words == {"acc": 2}, planner


# ----------------------------------------------------------------------------- building

def test_no_shuffles_when_the_lanes_sharing_an_output_are_not_a_coset():
    # output i lives in threads 3*i + rep (rep < 3): lane 0 and lane 1 share output 0,
    # but lane 2's partner lane 3 holds output 1, so no lane bit qualifies
    i, rep = Var("i"), Var("rep")
    storage = Layout((8,), ("i",), i * 3 + rep, Const(0), 32, 3)
    assert shuffle_bits(storage) == ()
    collective = segmented(storage, 3, 1, 4)
    assert not any(isinstance(s, Shuffle) for s in collective.chunks[0].steps)
    assert collective.publish.terms == 3 and collective.workspace_words == 32


def test_cosets_must_follow_the_replica_numbering():
    storage = fully_replicated((4,), 64)
    assert shuffle_bits(storage) == (0, 1, 2, 3, 4)
    assert cosets_match_replicas(storage, (0, 1, 2, 3, 4))
    # replicas numbered against the lanes: rep 0, 1 are threads 0 and 32
    rep = Var("rep")
    crossed = Layout((4,), ("i",), (rep % 2) * 32 + rep // 2, Var("i"), 64, 64)
    assert not cosets_match_replicas(crossed, (0, 1, 2, 3, 4))
    assert segmented(crossed, 64, 1, 4).publish.terms == 64       # L = 1: always right


def test_a_workspace_over_the_budget_falls_back_to_the_transpose():
    storage = fully_replicated((1024,), 64)
    with pytest.raises(NoSegments, match="workspace words"):
        segmented(storage, 64, 1, 4, workspace_bytes=1024)
    func = _func(GEMV)
    (sites,) = gather_reducers(func, infer_layouts(func))
    rp = plan_transpose(sites)
    assert rp.storage.replicate == 128 and rp.finalizes[0].publish is None


def test_loops_over_parts_of_a_row_share_a_widened_storage():
    """k < 93 and k + 93 over k < 35 reach threads 8*(i % 4) + 0..5 and + 5..7 of each
    row: neither projection keeps the other's contributions, the projection widened to 8
    replicas keeps both (16 partials per thread instead of 64), and the simulator agrees."""
    func = _func(ROOT / "tests" / "programs" / "valid" / "fuzz_row_split_windows.py")
    for planner in ("canonical", "fast"):
        plan = plan_func(func, planner)
        rp, _ = _finalize(plan)
        assert rp.storage.describe() == \
            "thread = 8*(i % 4) + rep, slot = i // 4, replicate 8 (threads 0..31)", planner
        assert rp.storage.slots_per_thread == 16
        assert _agrees(func, plan) == []


def test_in_place_finalize_keeps_every_output_everywhere():
    func = _func(ROOT / "examples" / "gemv_nondividing.py")
    rp, fp = _finalize(plan_func(func, "canonical"))
    assert rp.storage.replicate == rp.storage.count == 128
    assert fp.publish is not None and _agrees(func, plan_func(func, "canonical")) == []


# ----------------------------------------------------------------------------- faults

def _with_publish(plan, **changes):
    rp, fp = _finalize(plan)
    fp = replace(fp, publish=replace(fp.publish, **changes))
    return replace(plan, reducers=(replace(rp, finalizes=(fp,)),))


def _with_steps(plan, change):
    rp, fp = _finalize(plan)
    chunk = fp.chunks[0]
    fp = replace(fp, chunks=(replace(chunk, steps=tuple(change(list(chunk.steps)))),))
    return replace(plan, reducers=(replace(rp, finalizes=(fp,)),))


def _violations(plan) -> list:
    func = plan.func
    return simulate(plan, prepare(func, 0)).violations


def test_publication_of_one_warp_of_two_is_r503():
    plan = _with_publish(plan_func(_wide_gemv(), "canonical"), terms=1)
    found = [d for d in _violations(plan) if d.code == "R503"]
    assert found and "entered y_frag" not in found[0].message
    assert "0 times" in found[0].message


def test_publication_past_the_workspace_is_r505():
    plan = plan_func(_func(GEMV), "canonical")
    rp, fp = _finalize(plan)
    plan = _with_publish(plan, addr=fp.publish.addr + 64)
    found = [d for d in _violations(plan) if d.code == "R505"]
    assert found and "publication reads workspace word" in found[0].message


def test_every_lane_storing_is_r504():
    def unguarded(steps):
        return [replace(s, guards=()) if isinstance(s, ToWorkspace) else s for s in steps]
    plan = _with_steps(plan_func(_func(GEMV), "canonical"), unguarded)
    assert "R504" in [d.code for d in _violations(plan)]


def test_a_missing_shuffle_is_r503():
    def drop(steps):
        return [s for s in steps if not (isinstance(s, Shuffle) and s.mask == 16)]
    plan = _with_steps(plan_func(_wide_gemv(), "canonical"), drop)
    found = [d for d in _violations(plan) if d.code == "R503"]
    assert found and "0 times" in found[0].message


def test_publication_and_its_barrier_are_rendered():
    from verify_reducer.codegen.cuda import render
    text = render(plan_func(_wide_gemv(), "canonical")).source
    assert "float published = acc_workspace[16*(i % 4) + i / 4];" in text
    assert "published = published + acc_workspace[16*(i % 4) + i / 4 + 8];" in text
    assert text.count("reducer_barrier(1, 256);") == 2
    assert isinstance(plan_func(_wide_gemv(), "canonical").reducers[0].finalizes[0].publish,
                      Publish)


def test_fast_in_place_keeps_every_output_everywhere():
    """GPU fuzz finding: the in-place destination stays an obligation of the fast plan
    (publication cannot widen a narrow storage that later statements read): here no
    partition keeps the product everywhere, so auto falls back to canonical."""
    func = _func(ROOT / "tests/programs/valid/in_place_fast_keeps_every_output.py")
    with pytest.raises(Exception, match="thread 32 must write acc0"):
        plan_func(func, "fast")
    plan = plan_func(func, "auto")
    rp, fp = _finalize(plan)
    assert rp.planner == "canonical" and rp.storage.replicate == rp.storage.count == 96
    assert _agrees(func, plan) == []
