"""Source locations. Lines and columns are 1-based, as compilers print them;
`end_col` is exclusive."""
from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    line: int
    col: int
    end_line: int
    end_col: int

    @staticmethod
    def of(node: ast.AST) -> "Span":
        line = getattr(node, "lineno", 1) or 1
        col = (getattr(node, "col_offset", 0) or 0) + 1
        end_line = getattr(node, "end_lineno", None) or line
        end_col = (getattr(node, "end_col_offset", None) or col) + 1
        return Span(line, col, end_line, end_col)

    def to(self, other: "Span") -> "Span":
        """The span from the start of self to the end of other."""
        return Span(self.line, self.col, other.end_line, other.end_col)


NO_SPAN = Span(1, 1, 1, 1)
