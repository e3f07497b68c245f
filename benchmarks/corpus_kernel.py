"""A kernel of the upstream corpus (tests/upstream/: TileLang's examples as upstream
writes them, each header naming the upstream path and commit), for the same-source
benchmarks: bound to parameters for our frontend as tests/test_upstream.py binds a
factory (a module-level call appended), and compiled by TileLang's own `@tilelang.jit`
from the same file with the same Python values (`Call`)."""
from __future__ import annotations

import contextlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from verify_reducer.codegen import tilelang_backend

from benchmarks.same_source import OURS, Cell, Planned, plan_ours, time_events

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "upstream"


@dataclass(frozen=True)
class Call:
    """A factory's arguments, the same Python values for both compilers."""
    args: tuple = ()
    kwargs: tuple[tuple[str, object], ...] = ()

    def text(self) -> str:
        return ", ".join([*map(repr, self.args), *(f"{k}={v!r}" for k, v in self.kwargs)])


@dataclass(frozen=True)
class CorpusKernel:
    """tests/upstream/<stem>.py: a TileLang example as upstream writes it, its header
    naming where it comes from, and the factory `name` in it."""
    stem: str
    name: str

    @property
    def path(self) -> Path:
        return CORPUS / f"{self.stem}.py"

    @property
    def upstream(self) -> str:
        """`tile-ai/tilelang PATH @ COMMIT`, from the file's header."""
        first = self.path.read_text().splitlines()[0]
        match = re.fullmatch(r"# upstream: (tile-ai/tilelang \S+ @ [0-9a-f]{40})", first)
        if match is None:
            raise ValueError(f"{self.path}: the first line names no upstream path and commit")
        return match.group(1)

    def bound_source(self, call: Call) -> str:
        """The file with `_bound = NAME(ARGS)` appended: our frontend binds a factory
        from a module-level call with constant arguments (tests/test_upstream.py)."""
        return self.path.read_text().rstrip("\n") + f"\n\n_bound = {self.name}({call.text()})\n"

    def parse(self, call: Call):
        from verify_reducer.spec.frontend import parse_source
        return parse_source(self.bound_source(call), self.path.name).func()

    def plan(self, call: Call) -> dict[str, Planned]:
        """Our fast and canonical plans of the bound file (a parse failure is each
        plan's reason)."""
        try:
            func = self.parse(call)
        except Exception as exc:   # a DiagnosticError, or a frontend bug
            why = f"parse: {type(exc).__name__}: {exc}"
            return {p: Planned(None, why, why) for p in OURS}
        return {p: plan_ours(func, p) for p in OURS}

    def tilelang_kernel(self, call: Call):
        """TileLang's compiled kernel of the same file: the module imported as the
        backend imports it (codegen.tilelang_backend.load_program_module), an @autotune
        around the @tilelang.jit bypassed (it would time other tilings than the one the
        table names), compiled with the jit's own out_idx and pass configs, as the
        example's main() compiles it."""
        with contextlib.redirect_stdout(sys.stderr):      # TileLang logs on stdout
            try:
                module = tilelang_backend.load_program_module(str(self.path))
            except Exception as exc:
                raise tilelang_backend.TileLangFailed("import", exc) from exc
            jit = getattr(module, self.name)
            jit = getattr(jit, "jit_impl", jit)
            try:
                return jit.compile(*call.args, **dict(call.kwargs))
            except Exception as exc:
                raise tilelang_backend.TileLangFailed("compile", exc) from exc


def tilelang_cell(kernel: CorpusKernel, call: Call, tensors, judge_output, torch,
                  repeat: int) -> Cell:
    """TileLang's kernel run once on tensors (it returns its output: the jit's out_idx,
    or an eager kernel's T.empty), judge_output(numpy float32) -> (error, wrong), and
    timed."""
    compiled = kernel.tilelang_kernel(call)
    out = compiled(*tensors)
    torch.cuda.synchronize()
    error, wrong = judge_output(out.float().cpu().numpy())
    return Cell(time_events(torch, lambda: compiled(*tensors), repeat), wrong=wrong,
                error=error)

