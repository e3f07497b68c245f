"""The thread program (codegen.lower.program): every concern's decisions gathered under
their statements, printed by `emit --what threads` (text and JSON)."""
from __future__ import annotations

import json

from verify_reducer.codegen.lower import program as program_mod
from verify_reducer.codegen.lower.program import Lowered, lower, program_json
from verify_reducer.codegen.plan import plan_func
from verify_reducer.spec import ir
from verify_reducer.spec.frontend import parse_file
from verify_reducer.verify.cli.commands import main

from test_cli_conventions import ROOT, assert_valid

PIPELINED = ROOT / "examples" / "gemv_pipelined.py"


def _plan(path, planner="canonical"):
    return plan_func(parse_file(str(path)).func(), planner)


def test_every_barrier_site_and_finalize_of_the_plan_is_in_the_program():
    plan = _plan(PIPELINED)
    program = lower(plan)
    assert [i.decision for i in program.items if i.concern == "barrier"] == \
        list(plan.barriers.items)
    sites = [s for rp in plan.reducers for s in rp.sites]
    finalizes = [f for rp in plan.reducers for f in rp.finalizes]
    assert [program.of(s.update, "update") for s in sites] == sites
    assert [program.of(f.finalize, "finalize") for f in finalizes] == finalizes
    text = program.describe()
    # each decision printed once, under its statement's line
    assert text.count("| barrier: ") == len(plan.barriers.items)
    loop = next(s for s in ir.walk(plan.func.kernel.body) if isinstance(s, ir.SerialFor))
    at_loop = text.split(f"\n{loop.span.line:>5}  ")[1].splitlines()
    assert at_loop[1].strip().startswith("| barrier: before: __syncthreads()")


def test_a_registered_lowering_prints_under_its_statement(monkeypatch):
    plan = _plan(PIPELINED)
    copies = [s for s in ir.walk(plan.func.kernel.body) if isinstance(s, ir.Copy)]

    def marks(p):
        for stmt in copies:
            yield Lowered(stmt, "mark", stmt.span.line, f"copy at line {stmt.span.line}")
    monkeypatch.setattr(program_mod, "LOWERINGS", [*program_mod.LOWERINGS, ("mark", marks)])
    program = lower(plan)
    assert [program.of(c, "mark") for c in copies] == [c.span.line for c in copies]
    rows = [r for r in program_json(program) if r["concern"] == "mark"]
    assert [r["line"] for r in rows] == [c.span.line for c in copies]
    assert all(r["statement"].startswith("T.copy(") for r in rows)


def test_emit_threads_prints_the_program_and_its_json(capsys):
    assert main(["emit", "--what", "threads", "--plan", "canonical", str(PIPELINED)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("thread program of main: grid (4,), 128 threads, plan canonical")
    assert "| update: canonical: only replica 0" in text
    assert main(["emit", "--what", "threads", "--plan", "canonical", "--json",
                 str(PIPELINED)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert_valid(doc)
    assert doc["what"] == "threads"
    assert {r["concern"] for r in doc["threads"]} >= {"barrier", "update", "finalize"}


def test_the_program_holds_each_concerns_own_decisions():
    """The cells, copies and pipeline under their statements are the very values the
    two executors use (codegen.lower.cells/copies/pipeline), not a description."""
    from verify_reducer.codegen.lower.cells import cell_loop
    from verify_reducer.codegen.lower.copies import lower_copy
    from verify_reducer.codegen.lower.pipeline import lower_pipeline
    plan = _plan(PIPELINED)
    program = lower(plan)
    body = list(ir.walk(plan.func.kernel.body))
    loop = next(s for s in body if isinstance(s, ir.ParallelFor))
    assert program.of(loop, "cells") == cell_loop(plan.layouts.loops[loop])
    for copy in (s for s in body if isinstance(s, ir.Copy)):
        assert program.of(copy, "copy") == \
            lower_copy(plan, copy, plan.layouts.participants[copy])
    [pipe] = plan.pipelines
    assert program.of(pipe.loop, "pipeline") == lower_pipeline(plan, pipe)


def test_every_example_has_a_thread_program(capsys):
    for path in sorted((ROOT / "examples").glob("*.py")):
        assert main(["emit", "--what", "threads", str(path)]) == 0, path
        assert capsys.readouterr().out.startswith("thread program of ")
