"""Layouts drawn (codegen.plan_svg, `emit --what svg`): every example's fragments, reducer
storages, update loops and finalizes give SVG documents that parse as XML, with one cell
per (thread, slot) in each grid, each holding the element the layout puts there, and a
legend; a finalize's steps and workspace words are the plan's (spec.step_cells); a
counterexample is drawn on the grid it names."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("drawsvg")

from verify_reducer.codegen.finalize_svg import destination
from verify_reducer.codegen.plan_svg import (MAX_CELLS, PictureTooLarge, plan_pictures,
                                             plan_svg, stacked_svg)
from verify_reducer.spec.step_cells import publish_words
from verify_reducer.spec.layout import Layout
from verify_reducer.spec.indexexpr import Var
from verify_reducer.verify.oracle import pipeline
from verify_reducer.verify.cli.commands import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
SVG = "{http://www.w3.org/2000/svg}"


def _plan(path: Path, planner: str = "canonical"):
    return pipeline.make_plan(pipeline.load(str(path)), planner)


def _root(svg: str) -> ET.Element:
    return ET.fromstring(svg.encode())


def _cells(root: ET.Element) -> list[ET.Element]:
    return [e for e in root.iter(f"{SVG}rect") if e.get("class") == "cell"]


def _layouts_of(plan) -> list[Layout]:
    out = list(plan.layouts.fragments.values())
    for rp in plan.reducers:
        out.append(rp.storage)
        out += [site.loop for site in rp.sites]
    return out


def _grids(root: ET.Element) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == "layout"]


def _check_grid(group: ET.Element, layout: Layout, what: str) -> None:
    """One cell per (thread, slot) of the layout, each at its own pair."""
    cells = [e for e in group.iter(f"{SVG}rect") if e.get("class") == "cell"]
    assert len(cells) == layout.count * layout.slots_per_thread, what
    pairs = {(int(c.get("data-t")), int(c.get("data-s"))) for c in cells}
    assert len(pairs) == len(cells), what
    threads = {t for t, _ in pairs}
    assert threads == set(range(layout.offset, layout.offset + layout.count)), what


def _finalizes(plan):
    return [(rp, fp) for rp in plan.reducers for fp in rp.finalizes]


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_example_draws_one_cell_per_thread_and_slot(path):
    try:
        plan = _plan(path)
    except Exception as exc:                 # an example that is rejected on purpose
        pytest.skip(f"{path.name} has no plan: {exc}")
    pictures = plan_pictures(plan)
    layouts = _layouts_of(plan)
    finalizes = _finalizes(plan)
    assert len(pictures) == len(layouts) + len(finalizes)
    assert len({p.name for p in pictures}) == len(pictures)
    for picture, layout in zip(pictures, layouts):
        root = _root(picture.svg)
        [grid] = _grids(root)
        _check_grid(grid, layout, picture.name)
        assert [g for g in root.iter(f"{SVG}g") if g.get("class") == "legend"], picture.name
    for picture, (rp, fp) in zip(pictures[len(layouts):], finalizes):
        assert picture.name == f"finalize-{rp.reducer.name}-line{fp.finalize.span.line}"
        root = _root(picture.svg)
        partials, published = _grids(root)
        _check_grid(partials, rp.storage, picture.name)
        _check_grid(published, destination(rp, fp, plan.layouts.fragments)[0], picture.name)
        steps = [e for e in root.iter(f"{SVG}rect") if e.get("class") == "step"]
        assert len(steps) == rp.participants[1] * sum(len(c.steps) for c in fp.chunks)
        words = [e for e in root.iter(f"{SVG}rect") if e.get("class") == "word"]
        assert len(words) == rp.workspace_words
        assert [g for g in root.iter(f"{SVG}g") if g.get("class") == "legend"], picture.name


def test_the_segmented_finalize_shows_shuffles_one_store_per_coset_and_the_publication():
    """gemv_pipelined's auto plan: a segmented all-reduce with a publication. The
    stores hit each word once, the words the picture's holders read are the plan's
    publication addresses, and every word read was written."""
    plan = _plan(ROOT / "examples" / "gemv_pipelined.py", "auto")
    [(rp, fp)] = [(rp, fp) for rp, fp in _finalizes(plan) if fp.publish is not None]
    picture = next(p for p in plan_pictures(plan) if p.name.startswith("finalize-"))
    root = _root(picture.svg)
    # a step's kind is on its column; a thread that does not take part is data-active=0
    steps = [(column.get("data-kind"), e) for column in root.iter(f"{SVG}g")
             if column.get("class") == "step-column"
             for e in column.iter(f"{SVG}rect") if e.get("class") == "step"]
    kinds = {kind for kind, e in steps if e.get("data-active") != "0"}
    assert {"Shuffle", "ToWorkspace", "Barrier"} <= kinds
    stored = [int(w) for kind, e in steps if kind == "ToWorkspace"
              for w in (e.get("data-writes") or "").split()]
    assert len(stored) == len(set(stored))
    words = {int(e.get("data-word")): e for e in root.iter(f"{SVG}rect")
             if e.get("class") == "word"}
    _, published = _grids(root)
    layout = destination(rp, fp, plan.layouts.fragments)[0]
    cells = [c for c in published.iter(f"{SVG}rect") if c.get("class") == "cell"
             and c.get("data-i")]
    assert cells
    for c in cells:
        index = tuple(int(i) for i in c.get("data-i").split(","))
        flat = np.ravel_multi_index(index, layout.shape)
        expected = publish_words(fp.publish, rp.reducer.shape, np.array([flat]))[0]
        assert [int(w) for w in c.get("data-words").split()] == expected.tolist()
        for w in expected:
            assert int(w) in stored and c.get("data-t") in \
                words[int(w)].get("data-readers").split()


def _marks(root: ET.Element) -> dict[str, set]:
    out: dict[str, set] = {}
    for e in root.iter(f"{SVG}rect"):
        if e.get("class") == "mark":
            out.setdefault(e.get("data-role"), set()).add(
                (int(e.get("data-t")), int(e.get("data-s"))))
    return out


def test_r400_draws_the_missing_iteration_and_its_group():
    plan = _plan(ROOT / "examples" / "two_sites_8_16.py", "auto")
    [note] = [n for rp in plan.reducers for n in rp.notes if n.code == "R400"]
    cx = note.counterexample
    assert cx.grid == ("update", "acc", 34) and cx.groups
    [picture] = [p for p in plan_pictures(plan, [note]) if p.name.startswith("R400")]
    root = _root(picture.svg)
    marks = _marks(root)
    site = next(s for rp in plan.reducers for s in rp.sites if s.update.span.line == 34)
    [(missing, _)] = [e for e in cx.elements if e[1] == "missing"]
    threads = site.loop.threads_of(tuple(np.array([i]) for i in missing), absolute=True)
    assert {t for t, _ in marks["missing"]} == {int(t) for t in threads[:, 0]}
    group = {int(e.get("data-t")) for e in root.iter(f"{SVG}rect")
             if e.get("class") == "group"}
    assert group == set(cx.groups[0])
    assert not group & {t for t, _ in marks["missing"]}      # missing from the group


def test_r503_draws_the_contribution_and_the_copies_it_entered(tmp_path, capsys):
    program = str(ROOT / "examples" / "minimal_legacy.py")
    folder = tmp_path / "legacy"
    code = main(["run", program, "--backend", "sim", "--plan", "legacy", "--svg",
                 f"{folder}/"])
    assert code == 3
    [drawn] = [p for p in folder.iterdir() if p.name.startswith("minimal_legacy-main-R503")]
    root = _root(drawn.read_text())
    marks = _marks(root)
    # x_frag[0] is held by 16 replicas (8 threads apart): the contribution in each
    assert {t for t, _ in marks["contribution"]} == set(range(0, 128, 8))
    rows = {e.get("data-role"): int(e.get("data-t")) for e in root.iter(f"{SVG}rect")
            if e.get("class") == "mark-row" and e.get("data-role") == "copy"}
    assert rows == {"copy": 0}
    assert "wrote" in capsys.readouterr().out


def test_svg_is_deterministic():
    plan = _plan(ROOT / "examples" / "two_sites_8_16.py", "auto")
    again = _plan(ROOT / "examples" / "two_sites_8_16.py", "auto")
    assert [p.svg for p in plan_pictures(plan)] == [p.svg for p in plan_pictures(again)]


def test_svg_on_another_backend_is_a_usage_error(capsys):
    program = str(ROOT / "examples" / "minimal_rfc.py")
    assert main(["run", program, "--backend", "interp", "--svg", "x.svg"]) == 2
    assert "--backend sim" in capsys.readouterr().err


def test_a_cell_holds_the_element_the_layout_puts_there():
    layout = Layout((4, 8), ("i", "j"), Var("j") % 4 + Var("i") % 2 * 4,
                    Var("j") // 4 + Var("i") // 2 * 2, 8)
    root = _root(stacked_svg([(layout, "t", None)]))
    held = {(int(c.get("data-t")), int(c.get("data-s"))): c.get("data-i")
            for c in _cells(root)}
    threads, slots = layout.threads_of()[0], layout.slots_of()
    for n, (i, j) in enumerate(np.ndindex(4, 8)):
        assert held[(int(threads[n]), int(slots[n]))] == f"{i},{j}"


def test_replicas_that_do_not_contribute_are_faded():
    plan = _plan(ROOT / "examples" / "minimal_rfc.py", "canonical")
    [site] = plan.reducers[0].sites
    assert site.guard_replica == 0
    [picture] = [p for p in plan_pictures(plan) if p.name.startswith("update-")]
    cells = _cells(_root(picture.svg))
    faded = [c for c in cells if c.get("fill-opacity") == "0.35"]
    assert faded and all(c.get("data-r") != "0" for c in faded)
    assert all(c.get("fill-opacity") is None for c in cells if c.get("data-r") == "0")


def test_too_many_cells_is_refused():
    layout = Layout((MAX_CELLS * 2,), ("i",), Var("i") % 1024, Var("i") // 1024, 1024)
    with pytest.raises(PictureTooLarge, match="cells"):
        stacked_svg([(layout, "big", None)])


def test_emit_svg_to_a_folder_and_to_a_file(tmp_path, capsys):
    program = str(ROOT / "examples" / "minimal_rfc.py")
    folder = tmp_path / "pictures"
    assert main(["emit", program, "--what", "svg", "--out", f"{folder}/"]) == 0
    files = sorted(p.name for p in folder.iterdir())
    assert files == [f"minimal_rfc-main-{n}.svg" for n in
                     ("finalize-total-line26", "fragment-result", "fragment-x_frag",
                      "storage-total", "update-total-line23")]
    for name in files:
        _root((folder / name).read_text())
    one = tmp_path / "all.svg"
    assert main(["emit", program, "--what", "svg", "--out", str(one)]) == 0
    root = _root(one.read_text())
    # four grids, and the finalize's partials and publication
    assert len(_grids(root)) == 6
    capsys.readouterr()
    assert main(["emit", program, "--what", "svg"]) == 0
    assert _root(capsys.readouterr().out.strip()) is not None


def test_emit_svg_to_an_unwritable_path_is_a_usage_error(tmp_path, capsys):
    program = str(ROOT / "examples" / "minimal_rfc.py")
    code = main(["emit", program, "--what", "svg", "--out",
                 str(tmp_path / "missing" / "x.svg")])
    assert code == 2            # checked before any plan is drawn (verify.cli.outputs)
    assert "no such directory" in capsys.readouterr().err


def test_the_whole_plan_in_one_document_parses():
    plan = _plan(ROOT / "examples" / "gemv_pipelined.py", "auto")
    root = _root(plan_svg(plan))
    layouts = _layouts_of(plan) + [lay for rp, fp in _finalizes(plan) for lay in
                                   (rp.storage, destination(rp, fp, plan.layouts.fragments)[0])]
    assert len(_cells(root)) == sum(lay.count * lay.slots_per_thread for lay in layouts)


def test_r300_draws_the_thread_and_the_element_s_holders():
    """A fragment layout shifted by one thread under the copy that fills it: the
    simulator's R300 names thread 0 and marks the holders of x_frag[0] on its grid."""
    import copy
    import dataclasses

    from verify_reducer.interp.simulate import simulate
    from verify_reducer.spec.indexexpr import Const
    loaded = pipeline.load(str(ROOT / "examples" / "minimal_rfc.py"))
    plan = pipeline.make_plan(loaded, "canonical")
    layouts = copy.copy(plan.layouts)
    layouts.fragments = dict(plan.layouts.fragments)
    x = next(b for b in layouts.fragments if b.name == "x_frag")
    old = layouts.fragments[x]
    layouts.fragments[x] = dataclasses.replace(
        old, thread=(old.thread + Const(1)) % Const(old.count))
    shifted = dataclasses.replace(plan, layouts=layouts)
    found = [v for v in simulate(shifted, loaded.inputs(0)).violations if v.code == "R300"]
    assert found
    cx = found[0].counterexample
    assert cx.grid == ("fragment", "x_frag") and cx.threads == ((0, "unheld"),)
    [picture] = [p for p in plan_pictures(shifted, found[:1]) if p.name.startswith("R300")]
    root = _root(picture.svg)
    holders = {t for t, _ in _marks(root)["holder"]}
    assert holders == set(range(1, 128, 8))
    rows = [e for e in root.iter(f"{SVG}rect") if e.get("class") == "mark-row"]
    assert [(r.get("data-t"), r.get("data-role")) for r in rows] == [("0", "unheld")]
