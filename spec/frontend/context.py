"""What the lowering of one prim_func knows: the names in scope (constants, loop and Let
variables, buffers), the diagnostics collected so far, and the bookkeeping the reducer
surfaces need (which reducers got an explicit epoch start)."""
from __future__ import annotations

import ast
from dataclasses import dataclass

from ..diagnostics import Diagnostic
from ..ir import Alloc, Buffer, Var
from .constants import ConstFolder, NotConstant
from .errors import Poisoned, shape_error, unknown
from .names import Imports


@dataclass(frozen=True)
class Constant:
    """A compile-time value bound to a name (module constant, factory parameter, or a
    kernel-local `x = 4`)."""
    value: object


@dataclass(frozen=True)
class Opaque:
    """A module-level name we could not fold (`x = torch.randn(4)`, a helper function):
    harmless unless the kernel uses it."""
    why: str


@dataclass(frozen=True)
class Inlined:
    """A helper's parameter or local bound to a kernel expression: the helper's body
    reads it where the name appears, as a TileLang expression passed to a Python
    function is the same expression wherever the function uses it."""
    expr: object        # ir.Expr


class _Poison:
    """The name's definition failed and was reported; its uses are skipped silently."""


POISON = _Poison()
Entry = Constant | Opaque | Inlined | Var | Buffer | _Poison


class Scope:
    def __init__(self, parent: "Scope | None" = None):
        self.parent = parent
        self.names: dict[str, Entry] = {}
        # how many of names' variables and buffers carry each IR name: asking whether
        # one is live is then a lookup per scope, not a pass over every name bound so
        # far (5,000 Let bindings made that quadratic: seconds)
        self.carried: dict[str, int] = {}

    def bind(self, name: str, entry: Entry) -> None:
        old = self.names.get(name)
        if isinstance(old, (Var, Buffer)):
            self.carried[old.name] -= 1
        self.names[name] = entry
        if isinstance(entry, (Var, Buffer)):
            self.carried[entry.name] = self.carried.get(entry.name, 0) + 1

    def lookup(self, name: str) -> Entry | None:
        scope = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        return None


class FuncContext:
    def __init__(self, imports: Imports, env: dict[str, Entry]):
        self.imports = imports
        self.scope = Scope()
        for name, entry in env.items():
            self.scope.bind(name, entry)
        self.diagnostics: list[Diagnostic] = []
        self.folder = ConstFolder(imports, self.const_lookup, self._buffer, self._helper)
        self.used_names: set[str] = set()
        self.explicit_init: set[int] = set()          # id() of reducers with an epoch start
        self.block_allocs: list[list[Alloc]] = []     # reducer Allocs per open block
        self.helper_depth = 0                         # helpers being inlined (helpers.py)
        self.views: list = []                         # T.reshape/T.view made (views.py)
        self.thread_extents: tuple[int, ...] = (128,)  # T.Kernel's threads= (x, y, z)
        self.var_buffers: set[int] = set()            # id() of T.alloc_var buffers
        self.raster = None                            # T.use_swizzle's ir.Raster

    # ------------------------------------------------------------------ names

    def lookup(self, name: str) -> Entry | None:
        return self.scope.lookup(name)

    def bind(self, name: str, entry: Entry) -> None:
        self.scope.bind(name, entry)

    def _helper(self, name: str) -> ast.FunctionDef | None:
        return getattr(self.lookup(name), "node", None)

    def _buffer(self, name: str) -> Buffer | None:
        entry = self.lookup(name)
        return entry if isinstance(entry, Buffer) else None

    def truth(self, node: ast.AST) -> bool | None:
        """The truth of a condition that is a Python value at trace time (`op == "sum"`
        on a factory argument, `M % 2 == 0`, a string or a tuple), as Python's `if`
        takes it: TileLang's builder runs such an `if` as plain Python (ctx_if yields the
        value itself) and builds only the branch taken. None when the condition depends
        on kernel values (a TIR condition)."""
        try:
            value = self.folder.fold(node)
        except NotConstant as exc:
            self._refuse_foreign(exc)
            return None
        return bool(value)

    def _refuse_foreign(self, exc: NotConstant) -> None:
        """A condition that stopped at a name of another library (`torch.float16`) or
        at a module-level value we could not fold: Python would evaluate it at trace
        time and we cannot, so it is refused by name rather than lowered as a kernel
        condition (where its strings and objects would make no sense)."""
        node = exc.node
        path = self.imports.dotted(node) if isinstance(node, (ast.Name, ast.Attribute)) \
            else None
        if path is not None and not path.startswith("tilelang"):
            shape_error(f"`{ast.unparse(node)}` cannot be evaluated at trace time: the "
                        f"file is read, never run, so `{path.split('.')[0]}` is not "
                        f"imported", node)
        entry = self.lookup(node.id) if isinstance(node, ast.Name) else None
        if isinstance(entry, Opaque) and getattr(entry, "node", None) is None:
            shape_error(f"`{node.id}` cannot be evaluated at trace time ({entry.why})",
                        node)

    def const_lookup(self, name: str, node: ast.AST):
        entry = self.lookup(name)
        if isinstance(entry, Constant):
            return entry.value
        if entry is POISON:
            raise Poisoned(name)
        if entry is None and not self.imports.binds(name):
            unknown(f"unknown name `{name}`", node)
        raise NotConstant(node, f"`{name}` is not a compile-time constant")

    def fresh_name(self, name: str) -> str:
        """A name unique within the function for buffers and Let variables, so that
        later stages (C code, reports) never see two different objects under one name."""
        candidate, n = name, 0
        while candidate in self.used_names or self._live(candidate):
            n += 1
            candidate = f"{name}_{n}"
        self.used_names.add(candidate)
        return candidate

    def loop_name(self, name: str) -> str:
        """A loop variable keeps its source name (consecutive `for j` loops all say j)
        unless an enclosing variable or a buffer is visible under that name."""
        return self.fresh_name(name) if self._live(name) else name

    def _live(self, name: str) -> bool:
        """Whether a visible variable or buffer already carries this IR name (shadowed
        ones included: in C they are still in scope)."""
        scope = self.scope
        while scope is not None:
            if scope.carried.get(name, 0) > 0:
                return True
            scope = scope.parent
        return False

    def push(self) -> None:
        self.scope = Scope(self.scope)
        self.block_allocs.append([])

    def pop(self) -> list[Alloc]:
        self.scope = self.scope.parent
        return self.block_allocs.pop()
