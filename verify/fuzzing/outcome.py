"""A judged program's finding: what went wrong, where, and on which backend. Findings
with one signature (kind, code, stage, backend) are one bug: the minimizer keeps the
signature while it shrinks a program, and a campaign groups findings by it."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Outcome:
    kind: str         # rejected | violation | mismatch | oracle | crash | unsupported |
                      # compile; TileLang's: mismatch | refused | crashed
    code: str         # diagnostic code, exception type, the mismatching output, or
                      # TileLang's message (normalized: verify.fuzzing.tilelang_target)
    stage: str        # frontend | verify | layout | plan | resources | simulate | interp |
                      # codegen | backend, a crash's file:function, or TileLang's stage
                      # (import | compile | run)
    backend: str      # the run that disagreed ("sim/auto", "interp", "tilelang/default",
                      # ...), else "-"
    summary: str
    # TileLang's run (bugreport.TileLangOutcome) where it disagreed: the bug report is
    # built from it in the process that ran TileLang, and it never leaves that process
    evidence: object = field(default=None, compare=False, repr=False)

    @property
    def signature(self) -> tuple[str, str, str, str]:
        return (self.kind, self.code, self.stage, self.backend)
