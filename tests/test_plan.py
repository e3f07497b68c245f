"""The canonical and legacy planners (codegen.plan) on the RFC's examples and on the
shapes that broke TileLang: what each plan says (guards, participants, widths, barrier
ids and counts, chunks), and what it computes — the plan's steps are executed by the
numpy evaluator of test_plan_steps on real contributions, placed as the plan's update
sites say (every replica, or only the guarded one)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.codegen.layout import infer_layouts
from verify_reducer.codegen.plan import plan_func
from verify_reducer.codegen.plan_canonical import plan_transpose
from verify_reducer.codegen.plan_sites import gather_reducers
from verify_reducer.codegen.plan_text import format_plan, plan_json
from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.frontend import parse_file, parse_source
from verify_reducer.spec.physical import Barrier, Shuffle

from test_plan_steps import all_one_group, expect_groups, run_chunks, symbolic_partials

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def example(name: str):
    return parse_file(str(EXAMPLES / f"{name}.py")).func()


def source(text: str):
    return parse_source(text).func()


def kernel(threads: int, body: str, params: str = "x: T.Tensor((128,), T.float32), "
           "out: T.Tensor((128,), T.float32)") -> str:
    lines = "\n".join("        " + line for line in body.strip().splitlines())
    return (f"import tilelang.language as T\n\n@T.prim_func\ndef main({params}):\n"
            f"    with T.Kernel(1, threads={threads}) as bx:\n{lines}\n")


def outputs(rp, contributions) -> np.ma.MaskedArray:
    """Run one reducer plan on real values: contributions[site] maps a loop index tuple
    to (flat output index, value). Returns [participants, outputs] after the finalize
    (published into every storage copy when the plan publishes), masked where the
    thread keeps no copy of the output."""
    offset, count = rp.participants
    storage = rp.storage
    partials = np.zeros((count, storage.slots_per_thread, 1))
    index, _ = storage.inverse()
    for site, contribute in zip(rp.sites, contributions):
        loop = site.loop
        indices = loop.all_indices()
        threads = loop.threads_of(indices, absolute=True)        # [R, N]
        replicas = range(loop.replicate) if site.guard_replica is None \
            else [site.guard_replica]
        for n in range(loop.size):
            out, value = contribute(tuple(int(ix[n]) for ix in indices))
            slot = storage.slots_of(np.unravel_index([out], storage.shape))[0]
            for r in replicas:
                t = threads[r, n] - offset
                assert index[t, slot] == out, f"thread {t} keeps no copy of output {out}"
                partials[t, slot, 0] += value
    (finalize,) = rp.finalizes
    result = run_chunks(finalize.chunks, partials, rp.workspace_words, offset,
                        finalize.publish, storage)[..., 0]
    copies = np.full((count, storage.size), np.nan)
    held = np.nonzero(index >= 0)
    copies[held[0], index[held]] = result[held]
    return np.ma.masked_invalid(copies)


def transpose_plan(text: str):
    """The canonical fallback for a reducer: every output everywhere, transpose
    all-reduce in chunks."""
    func = source(text)
    (sites,) = gather_reducers(func, infer_layouts(func))
    return plan_transpose(sites)


def expect_copies(result: np.ndarray, storage) -> None:
    """After a publication on symbolic partials (one-hot thread, one-hot slot): every
    storage copy of output x holds each (thread, slot) that keeps x exactly once."""
    index, _ = storage.inverse()
    count = storage.count
    for t, s in zip(*np.nonzero(index >= 0)):
        holders = np.nonzero(index == index[t, s])
        want = np.zeros(result.shape[2], dtype=np.int64)
        np.add.at(want, holders[0], 1)
        np.add.at(want, count + holders[1], 1)
        assert (result[t, s] == want).all(), (t, s)


def only(plan):
    (rp,) = plan.reducers
    return rp


def barriers(fp):
    return [s for c in fp.chunks for s in c.steps if isinstance(s, Barrier)]


# ----------------------------------------------------------------------------- the RFC

X8 = np.arange(1, 9, dtype=float)


@pytest.mark.parametrize("name", ["minimal_rfc", "minimal_v2"])
def test_rfc_minimal_canonical_guards_replica_0_and_reduces_its_8_threads(name):
    """8 values on 128 threads: replica 0 of the loop is threads 0..7, so the storage
    keeps the partial there, three shuffles reduce it, one word per 8 lanes goes to the
    workspace and every thread of the destination reads the one word of threads 0..7."""
    rp = only(plan_func(example(name), "canonical"))
    assert rp.planner == "canonical" and rp.participants == (0, 128)
    (site,) = rp.sites
    assert site.guard_replica == 0 and site.loop.replicate == 16
    assert rp.storage.describe() == "thread = rep, slot = 0, replicate 8 (threads 0..127)"
    (fp,) = rp.finalizes
    assert (fp.width, fp.scale, fp.barrier_count) == (8, 1, 128)
    assert [s.mask for c in fp.chunks for s in c.steps if isinstance(s, Shuffle)] == [1, 2, 4]
    assert fp.publish.terms == 1 and fp.publish.barrier.count == 128
    assert {b.count for b in barriers(fp)} == {128}
    result = outputs(rp, [lambda ix: (0, X8[ix[0]])])
    assert (result[:, 0] == 36).all()


def test_rfc_minimal_legacy_surface_in_place_keeps_every_output_everywhere():
    """An in-place finalize leaves the reducer readable by anyone: every participant
    keeps the output, each warp is shuffled, and the 4 warp words are published."""
    rp = only(plan_func(example("minimal_legacy"), "canonical"))
    assert rp.storage.replicate == 128
    (fp,) = rp.finalizes
    assert fp.publish.terms == 4
    result = outputs(rp, [lambda ix: (0, X8[ix[0]])])
    assert (result[:, 0] == 36).all() and not np.ma.is_masked(result)


@pytest.mark.parametrize("name", ["minimal_rfc", "minimal_legacy"])
def test_rfc_minimal_legacy_is_unguarded_allreduce_128_and_gives_576(name):
    rp = only(plan_func(example(name), "legacy"))
    (site,) = rp.sites
    assert site.guard_replica is None
    (fp,) = rp.finalizes
    assert (fp.width, fp.scale, fp.barrier_count) == (128, 1, 128)
    assert [s.mask for c in fp.chunks for s in c.steps if isinstance(s, Shuffle)] == \
        [1, 2, 4, 8, 16]
    result = outputs(rp, [lambda ix: (0, X8[ix[0]])])
    assert (result[:, 0] == 576).all()                  # 16 * 36: the RFC's wrong code


def test_rfc_minimal_destination_layout_and_in_place():
    rp = only(plan_func(example("minimal_rfc"), "canonical"))
    assert rp.finalizes[0].dst_layout is not None       # result: a fragment
    rp = only(plan_func(example("minimal_legacy"), "canonical"))
    assert rp.finalizes[0].dst_layout is None           # in-place legacy finalize


# ----------------------------------------------------------------------------- domains

def test_warp_group_participants_come_from_the_execution_domain():
    plan = plan_func(example("warp_group"), "canonical")
    rp = only(plan)
    assert rp.participants == (128, 128)
    assert rp.storage.participants == (128, 128)
    (fp,) = rp.finalizes
    assert fp.barrier_count == 128 and {b.count for b in barriers(fp)} == {128}
    x = np.arange(1, 65, dtype=float)
    assert (outputs(rp, [lambda ix: (0, x[ix[0]])])[:, 0] == 2080).all()
    legacy = only(plan_func(example("warp_group"), "legacy"))
    assert legacy.participants == (128, 128) and legacy.finalizes[0].barrier_count == 128
    assert (outputs(legacy, [lambda ix: (0, x[ix[0]])])[:, 0] == 2 * 2080).all()


FORTY_EIGHT = kernel(128, """
x_frag = T.alloc_fragment((48,), T.float32)
T.copy(x[0:48], x_frag)
acc = T.alloc_reducer((1,), T.float32, op="sum")
for j in T.Parallel(48):
    T.reducer_update(acc[0], x_frag[j])
res = T.alloc_fragment((1,), T.float32)
T.finalize_reducer(acc, res)
T.copy(res, out[0:1])
""")


def test_48_iterations_on_128_threads_count_once():
    rp = only(plan_func(source(FORTY_EIGHT), "canonical"))
    (site,) = rp.sites
    assert site.loop.replicate == 2 and site.guard_replica == 0
    x = np.arange(1, 49, dtype=float)
    assert (outputs(rp, [lambda ix: (0, x[ix[0]])])[:, 0] == x.sum()).all()
    legacy = only(plan_func(source(FORTY_EIGHT), "legacy"))
    assert (outputs(legacy, [lambda ix: (0, x[ix[0]])])[:, 0] == 2 * x.sum()).all()


NINETY_SIX = kernel(96, """
x_frag = T.alloc_fragment((128,), T.float32)
T.copy(x, x_frag)
acc = T.alloc_reducer((128,), T.float32, op="sum")
for j in T.Parallel(128):
    T.reducer_update(acc[j], x_frag[j])
res = T.alloc_fragment((128,), T.float32)
T.finalize_reducer(acc, res, batch=BATCH)
T.copy(res, out)
""")


def test_96_participants_canonical_reduces_every_partial_once():
    rp = only(plan_func(source(NINETY_SIX.replace("BATCH", "16")), "canonical"))
    assert rp.participants == (0, 96)
    (fp,) = rp.finalizes
    assert fp.barrier_count == 96 and {b.count for b in barriers(fp)} == {96}
    x = np.arange(128, dtype=float) * 3 + 1
    assert (outputs(rp, [lambda ix: (ix[0], x[ix[0]])]) == x[None, :]).all()
    transposed = transpose_plan(NINETY_SIX.replace("BATCH", "16"))
    (fp,) = transposed.finalizes
    assert (fp.width, fp.barrier_count) == (96, 96)
    assert [c.count for c in fp.chunks] == [16] * 8
    result = run_chunks(fp.chunks, symbolic_partials(96, 128), transposed.workspace_words)
    expect_groups(result, all_one_group(96))


def test_96_participants_legacy_uses_a_power_of_two_width_and_loses_partials():
    rp = only(plan_func(source(NINETY_SIX.replace("BATCH", "16")), "legacy"))
    (fp,) = rp.finalizes
    assert fp.width == 32 and fp.barrier_count == 96
    result = run_chunks(fp.chunks, symbolic_partials(96, 128), rp.workspace_words)
    assert (result[:, :, :96].sum(axis=2) == 32).all()


# ----------------------------------------------------------------------------- batching

@pytest.mark.parametrize("batch, sizes", [
    ("4", [4] * 32),
    ("40", [40, 40, 40, 8]),
    ("64", [64, 64]),
    ("None", [64, 64]),        # no hint: the default, balanced under the workspace limit
    ("1000", [64, 64]),        # unusable (wider than the 64-slot limit): the default
])
def test_batch_hint_picks_chunks_that_cover_every_slot_once(batch, sizes):
    """In the transpose all-reduce (the canonical fallback when the segmented
    workspace would not fit) a batch hint picks the chunk size."""
    text = NINETY_SIX.replace("threads=96", "threads=128")
    text = text.replace(", batch=BATCH", "") if batch == "None" else \
        text.replace("BATCH", batch)
    rp = transpose_plan(text)
    (fp,) = rp.finalizes
    assert [c.count for c in fp.chunks] == sizes
    assert [c.first for c in fp.chunks] == list(np.cumsum([0] + sizes[:-1]))
    x = np.arange(128, dtype=float) * 3 + 1
    result = outputs(rp, [lambda ix: (ix[0], x[ix[0]])])
    assert (result == x[None, :]).all()


# ----------------------------------------------------------------------------- shapes

def test_2d_reducer_stores_every_output_and_sums_each_once():
    rp = only(plan_func(example("reducer_2d"), "canonical"))
    assert rp.storage.shape == (4, 8) and rp.storage.slots_per_thread == 32
    assert rp.finalizes[0].publish.terms == 4            # one word per warp
    x = np.arange(512, dtype=float).reshape(16, 32)
    result = outputs(rp, [lambda ix: ((ix[0] // 4) * 8 + ix[1] // 4, x[ix])])
    pooled = x.reshape(4, 4, 8, 4).sum(axis=(1, 3)).reshape(-1)
    assert (result == pooled[None, :]).all()


def test_update_outside_parallel_contributes_once():
    text = kernel(128, """
acc = T.alloc_reducer((1,), T.float32, op="sum")
acc[0] += 2.0
res = T.alloc_fragment((1,), T.float32)
T.finalize_reducer(acc, res)
T.copy(res, out[0:1])
""")
    rp = only(plan_func(source(text), "canonical"))
    (site,) = rp.sites
    assert site.guard_replica == 0 and site.loop.replicate == 128
    assert (outputs(rp, [lambda ix: (0, 2.0)])[:, 0] == 2.0).all()
    legacy = only(plan_func(source(text), "legacy"))
    assert (outputs(legacy, [lambda ix: (0, 2.0)])[:, 0] == 256.0).all()


def test_two_sites_each_guarded_by_their_own_loop():
    rp = only(plan_func(example("two_sites_8_16"), "canonical"))
    assert [s.loop.replicate for s in rp.sites] == [16, 8]
    assert [s.guard_replica for s in rp.sites] == [0, 0]


# ----------------------------------------------------------------------------- barriers

def test_several_reducers_get_distinct_barrier_ids():
    plan = plan_func(example("bitwise"), "canonical")
    ids = [fp.barrier_id for rp in plan.reducers for fp in rp.finalizes]
    assert ids == [1, 2, 3, 4, 5]
    for rp in plan.reducers:
        (fp,) = rp.finalizes
        assert {b.id for b in barriers(fp)} == {fp.barrier_id}


def test_more_than_15_finalizes_reuse_ids_of_the_same_participants():
    body = "\n".join(f'r{n} = T.alloc_reducer((1,), T.float32, op="sum")\n'
                     f'for j in T.Parallel(8):\n    T.reducer_update(r{n}[0], 1.0)\n'
                     f'f{n} = T.alloc_fragment((1,), T.float32)\n'
                     f'T.finalize_reducer(r{n}, f{n})' for n in range(17))
    plan = plan_func(source(kernel(128, body)), "canonical")
    ids = [rp.finalizes[0].barrier_id for rp in plan.reducers]
    assert ids == list(range(1, 16)) + [1, 2]


def test_update_outside_the_participant_set_is_a_layout_conflict():
    text = kernel(256, """
acc = T.alloc_reducer((1,), T.float32, op="sum")
with T.ws(0):
    for j in T.Parallel(8):
        T.reducer_update(acc[0], 1.0)
with T.ws(1):
    res = T.alloc_fragment((1,), T.float32)
    T.finalize_reducer(acc, res)
    T.copy(res, out[0:1])
""")
    with pytest.raises(DiagnosticError) as caught:
        plan_func(source(text), "canonical")
    assert caught.value.diagnostics[0].code == "R300"
    assert "outside the participant set 128..255" in caught.value.diagnostics[0].message
    # two thread ranges as wholes: no cell to mark, and the diagnostic says so
    assert caught.value.diagnostics[0].counterexample is None
    assert "thread range" in caught.value.diagnostics[0].no_picture


# ------------------------------------------------------------------------- every example

@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.stem)
@pytest.mark.parametrize("planner", ["canonical", "legacy"])
def test_every_example_plans_and_prints(path, planner):
    plan = plan_func(parse_file(str(path)).func(), planner)
    text = format_plan(plan)
    assert f"planner {planner}" in text
    doc = json.loads(json.dumps(plan_json(plan)))
    assert [r["reducer"] for r in doc["reducers"]] == \
        [r.reducer.name for r in plan.reducers]
    for rp in plan.reducers:
        slots = rp.storage.slots_per_thread
        for fp in rp.finalizes:
            covered = sorted(s for c in fp.chunks
                             for s in range(c.first, c.first + c.count))
            assert covered == list(range(slots))
            assert fp.barrier_count == rp.participants[1]
            if planner == "canonical":
                result = run_chunks(fp.chunks, symbolic_partials(rp.participants[1], slots),
                                    rp.workspace_words, rp.participants[0], fp.publish,
                                    rp.storage)
                expect_copies(result, rp.storage)


def test_format_plan_reads_like_the_issue():
    text = format_plan(plan_func(example("minimal_rfc"), "canonical"))
    assert "participants: threads 0..127 (128)" in text
    assert "storage: thread = rep, slot = 0, replicate 8 (threads 0..127)" in text
    assert "update line 23: loop thread = 8*rep + j" in text
    assert "only replica 0 contributes" in text
    assert "bar.sync 1, 128" in text
    assert "W[t // 8 + s] = P[t, s]  if t % 8 == 0" in text
    assert "publication into the destination: [i] = W[0] (every holder in its layout)" in text
    assert "workspace: 16 words" in text
    legacy = format_plan(plan_func(example("minimal_legacy"), "legacy"))
    assert "shfl_xor 16" in legacy and "every replica contributes" in legacy


def test_unknown_planner_is_refused():
    with pytest.raises(ValueError, match="unknown planner 'wide'"):
        plan_func(example("minimal_rfc"), "wide")
