"""The module level: imports, module constants, and where the prim_funcs are.

Two shapes are recognized: a module-level `@T.prim_func def main(...)`, and the factory
pattern `def kernel(M, N, block=64): ...; @T.prim_func def main(...): ...; return main`.
A factory's parameters are bound as spec.frontend.factories says (the caller's params,
a `# params:` line, the first call in the file with constant arguments, the
defaults). `@tilelang.jit(...)` and
`@tilelang.autotune(...)` decorators are ignored; other decorators on a prim_func or a
factory are R101. A `@T.reducer_op` function declares a reducer op (spec.frontend.user_ops). Everything else (helpers, reference implementations, `__main__`
blocks) is never looked at, let alone run."""
from __future__ import annotations

import ast
from dataclasses import dataclass

from ..diagnostics import Diagnostic, error
from ..dtypes import lookup as lookup_dtype
from .constants import ConstFolder, NotConstant
from .context import POISON, Constant, Entry, Opaque
from .errors import FrontendError, shape_error, unknown
from .eager import is_eager, prim_func as eager_prim_func, read_shape
from .helpers import Helper
from .factories import (Directive, ParamError, ParamText, TileLangFunction, defaults,
                        fold_given, missing_message, parameters, text_expression)
from .names import Imports
from .user_ops import DeclaredOp, declare, is_declaration

_IGNORED_DECORATORS = ("jit", "autotune", "lazy_jit")


@dataclass(frozen=True)
class _Param:
    """A name a factory binds, and where to report it missing."""
    arg: str
    where: ast.AST


@dataclass
class Site:
    """A prim_func to lower, with the constants it sees."""
    node: ast.FunctionDef
    env: dict[str, Entry]
    key: str
    imports: Imports            # the module's, or a factory's with its function aliases


def collect_imports(tree: ast.Module) -> Imports:
    imports = Imports()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.add(node)
    return imports


class ModuleScan:
    def __init__(self, tree: ast.Module, imports: Imports,
                 overrides: dict[str, object] | None = None,
                 params: dict[str, object] | None = None,
                 directives: list[Directive] | None = None):
        self.tree = tree
        self.imports = imports
        # module constants and factory parameters bound to other values than the file
        # gives them: a size family instantiated at another size, or its symbolic sizes
        # (spec.symbolic)
        self.overrides = dict(overrides or {})
        # the caller's factory parameters (--param, params=) and the `# params:` lines
        self.params = dict(params or {})
        self.directives = {d.name: d for d in directives or ()}
        self.bound: dict[str, object] = {}         # factory parameters, as bound
        self.env: dict[str, Entry] = {}
        self.sites: list[Site] = []
        self.diagnostics: list[Diagnostic] = []
        self.folder = ConstFolder(imports, self._lookup, None, self._helper)
        self._factories: list[ast.FunctionDef] = []
        self._eager: list[ast.FunctionDef] = []          # spec.frontend.eager
        self._eager_names: set[str] | None = set()       # None: one failed to read

    def run(self) -> None:
        for stmt in self.tree.body:
            self._statement(stmt)
        # factories are instantiated with the constants of the whole module, as a call
        # at the bottom of the file would see them
        for factory in self._factories:
            self._guard(self._factory, factory)
        for factory in self._eager:
            self._guard(self._eager_factory, factory)
        self._refuse_unbound_params()

    def constants(self) -> dict[str, object]:
        """The module constants and the factories' parameters as bound (a size family
        may name either)."""
        out = {k: v.value for k, v in self.env.items() if isinstance(v, Constant)}
        out.update(self.bound)
        return out

    def _refuse_unbound_params(self) -> None:
        """A caller's param or a `# params:` name that no factory has is a mistake that
        would otherwise pass silently (a misspelt --param M=... verifying the default)."""
        if self._eager_names is None:
            return          # an eager kernel that could not be read: its error says why
        names = list(dict.fromkeys([*(p.arg for f in self._factories for p in parameters(f)),
                                    *self._eager_names]))
        wanted = "factory parameters: " + ", ".join(names) if names else \
            "the file has no factory (a function returning a prim_func)"
        for name in self.params:
            if name not in names:
                raise ParamError(f"no factory in the file has a parameter `{name}` to "
                                 f"bind ({wanted})")
        for name, d in self.directives.items():
            if name not in names:
                self.diagnostics.append(error("R102",
                    f"`# params:` names `{name}`, which no factory in the file has as a "
                    f"parameter ({wanted})", d.span))

    # ------------------------------------------------------------------ helpers

    def _lookup(self, name: str, node: ast.AST):
        entry = self.env.get(name)
        if isinstance(entry, Constant):
            return entry.value
        raise NotConstant(node, f"`{name}` is not a module constant")

    def _helper(self, name: str) -> ast.FunctionDef | None:
        return getattr(self.env.get(name), "node", None)

    def _guard(self, fn, *args) -> None:
        try:
            fn(*args)
        except FrontendError as exc:
            self.diagnostics.append(exc.diagnostic)

    def _add_site(self, node: ast.FunctionDef, env: dict[str, Entry], owner: str | None,
                  imports: Imports | None = None):
        taken = {s.key for s in self.sites}
        key = node.name if node.name not in taken or owner is None else owner
        self.sites.append(Site(node, dict(env), key, imports or self.imports))

    # ------------------------------------------------------------------ statements

    def _statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                self._assign(target, stmt.value)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self._assign(stmt.target, stmt.value)
        elif isinstance(stmt, ast.FunctionDef) and is_declaration(self.imports, stmt):
            self._declare(stmt)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.env[stmt.name] = Opaque("a function")
            if isinstance(stmt, ast.FunctionDef):
                self._function(stmt)
        elif isinstance(stmt, ast.ClassDef):
            self.env[stmt.name] = Opaque("a class")

    def _assign(self, target: ast.AST, value: ast.AST) -> None:
        if isinstance(target, ast.Name):
            if target.id in self.overrides:
                self.env[target.id] = Constant(self.overrides[target.id])
                return
            self.env[target.id] = self._fold(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            folded = self._fold(value)
            values = folded.value if isinstance(folded, Constant) else None
            if isinstance(values, tuple) and len(values) == len(target.elts):
                for t, v in zip(target.elts, values):
                    if isinstance(t, ast.Name):
                        self.env[t.id] = Constant(v)
                return
            for n in ast.walk(target):
                if isinstance(n, ast.Name):
                    self.env[n.id] = Opaque("not a compile-time constant")

    def _fold(self, value: ast.AST) -> Entry:
        try:
            return Constant(self.folder.fold(value))
        except NotConstant as exc:
            return Opaque(exc.why)
        except FrontendError as exc:
            # e.g. `X = 1 // 0`: harmless unless a kernel uses X
            return Opaque(exc.diagnostic.message)

    def _declare(self, node: ast.FunctionDef) -> None:
        """A `@T.reducer_op` declaration (spec.frontend.user_ops); when it fails, its
        uses are skipped silently (the declaration's own error says what is wrong)."""
        try:
            monoid = declare(self, node)
        except FrontendError as exc:
            self.diagnostics.append(exc.diagnostic)
            self.env[node.name] = POISON
            return
        self.env[node.name] = DeclaredOp("a reducer op (usable as `op=` of "
                                         "T.alloc_reducer only)", monoid)

    def _function(self, node: ast.FunctionDef) -> None:
        if any(self._is_prim_func(d) for d in node.decorator_list):
            self._guard(self._check_decorators, node)
            self._add_site(node, self.env, None)
        elif self._has_inner_prim_func(node):
            self._factories.append(node)
        elif is_eager(self.imports, node):
            self._eager.append(node)
        elif not node.decorator_list:
            # a plain function: a helper the kernels may call (spec.frontend.helpers)
            self.env[node.name] = Helper("a helper function, not a value", node)

    # ------------------------------------------------------------------ decorators

    def _is_prim_func(self, dec: ast.AST) -> bool:
        target = dec.func if isinstance(dec, ast.Call) else dec
        return self.imports.t_name(target) == "prim_func"

    def _has_inner_prim_func(self, node: ast.FunctionDef) -> bool:
        """Whether the function defines a prim_func, itself or in a factory it defines
        (`def outer(): ... @tilelang.jit def make(): @T.prim_func def k(...)`)."""
        return any(isinstance(s, ast.FunctionDef)
                   and (any(self._is_prim_func(d) for d in s.decorator_list)
                        or self._has_inner_prim_func(s)) for s in node.body)

    def _check_decorators(self, node: ast.FunctionDef) -> None:
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            if self._is_prim_func(dec):
                continue
            path = self.imports.dotted(target) or ""
            if path.startswith("tilelang.") and path.rsplit(".", 1)[-1] in _IGNORED_DECORATORS:
                continue
            unknown(f"unknown decorator `@{ast.unparse(target)}`", dec)

    # ------------------------------------------------------------------ factories

    def _factory(self, node: ast.FunctionDef) -> None:
        self._check_decorators(node)
        env = dict(self.env)
        bound, functions = self._factory_arguments(node)
        env.update(bound)
        # a parameter bound to a TileLang function (`reduce_fn=T.reduce_max`) is that
        # function in the factory's kernels: an import alias of their own
        imports = self._aliased(functions, env)
        saved, self.env = self.env, env
        try:
            self._factory_body(node, node.body, imports)
        finally:
            self.env = saved

    def _eager_factory(self, node: ast.FunctionDef) -> None:
        """An eager `@tilelang.jit` kernel (spec.frontend.eager): its compile-time
        parameters and sizes bound as a factory's, its prim_func made of its body."""
        self._check_decorators(node)
        try:
            shape = read_shape(self.imports, node, self._names_something)
        except FrontendError:
            self._eager_names = None
            raise
        if self._eager_names is not None:
            self._eager_names.update([*(p.arg for p in parameters(node)),
                                      *(name for name, _ in shape.sizes)])
        env = dict(self.env)
        bound, functions = self._factory_arguments(node, set(shape.tensors), shape.sizes)
        env.update(bound)
        imports = self._aliased(functions, env)
        saved, self.env = self.env, env
        try:
            for stmt in shape.constants:
                if isinstance(stmt, ast.Assert):
                    self._guard(self._assert, node, stmt)
                    continue
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    self._assign(target, stmt.value)
            self._add_site(eager_prim_func(node, shape), self.env, node.name, imports)
        finally:
            self.env = saved

    def _aliased(self, functions: dict[str, str], env: dict[str, Entry]) -> Imports:
        """The module's imports, with the factory's parameters bound to TileLang
        functions (`reduce_fn=T.reduce_max`) as aliases of those functions."""
        if not functions:
            return self.imports
        imports = Imports()
        imports.paths = {**self.imports.paths, **functions}
        for name in functions:
            env.pop(name, None)
        return imports

    def _factory_body(self, factory: ast.FunctionDef, body: list[ast.stmt],
                      imports: Imports) -> None:
        """The factory's Python-level code as TileLang runs it before tracing: constant
        assignments, `if` on trace-time values (only the branch taken), `assert`s, and
        the prim_funcs it defines. Anything else is not looked at."""
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef) and any(self._is_prim_func(d)
                                                        for d in stmt.decorator_list):
                self._guard(self._check_decorators, stmt)
                self._add_site(stmt, self.env, factory.name, imports)
            elif isinstance(stmt, ast.FunctionDef) and self._has_inner_prim_func(stmt):
                self._guard(self._nested_factory, factory, stmt, imports)
            elif isinstance(stmt, ast.FunctionDef) and not stmt.decorator_list:
                # a helper defined in the factory: its kernels may call it
                self.env[stmt.name] = Helper("a helper function, not a value", stmt)
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    self._assign(target, stmt.value)
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                self._assign(stmt.target, stmt.value)
            elif isinstance(stmt, ast.If):
                truth = self._truth(stmt.test)
                if truth is not None:
                    self._factory_body(factory, stmt.body if truth else stmt.orelse,
                                       imports)
            elif isinstance(stmt, ast.Assert):
                self._guard(self._assert, factory, stmt)

    def _nested_factory(self, factory: ast.FunctionDef, inner: ast.FunctionDef,
                        imports: Imports) -> None:
        """A factory defined inside a factory (upstream's test helpers wrap a
        `@tilelang.jit def make_kernel():` in a function that sets its constants): read
        with the outer factory's names in scope, its own parameters from their defaults
        (the call that makes the kernel is the outer factory's business)."""
        self._check_decorators(inner)
        given = defaults(inner)
        missing = [p.arg for p in parameters(inner) if p.arg not in given]
        if missing:
            shape_error(f"factory `{inner.name}`, defined inside `{factory.name}`, has "
                        f"parameters without defaults ({', '.join(missing)}): a nested "
                        f"factory's parameters are read from their defaults only", inner)
        saved, self.env = self.env, dict(self.env)
        try:
            for name, node in given.items():
                self._assign(ast.copy_location(ast.Name(name, ast.Store()), node), node)
            self._factory_body(inner, inner.body, imports)
        finally:
            self.env = saved

    def _truth(self, test: ast.expr) -> bool | None:
        try:
            return bool(self.folder.fold(test))
        except (NotConstant, FrontendError):
            return None       # a condition we cannot evaluate chooses nothing we lower

    def _assert(self, factory: ast.FunctionDef, stmt: ast.Assert) -> None:
        """`assert reduce_op in ["sum", "max"]`: TileLang's factory raises before any
        kernel exists; so do we, when the condition is known to fail."""
        if self._truth(stmt.test) is False:
            shape_error(f"factory `{factory.name}`'s assertion `{ast.unparse(stmt.test)}` "
                        f"fails for its parameters as bound "
                        f"({self._binding_text(factory)})", stmt)

    def _binding_text(self, factory: ast.FunctionDef) -> str:
        shown = []
        for p in parameters(factory):
            entry = self.env.get(p.arg)
            if isinstance(entry, Constant):
                value = entry.value
                shown.append(f"{p.arg}={value!r}" if isinstance(value, str)
                             else f"{p.arg}={value}")
        return ", ".join(shown)

    def _factory_arguments(self, node: ast.FunctionDef, skip: set[str] = frozenset(),
                           sizes: list[tuple[str, ast.AST]] = ()) -> dict[str, Entry]:
        """The factory's parameters bound; skip: an eager kernel's tensor parameters;
        sizes: its size names (spec.frontend.eager), bound like parameters."""
        params = [_Param(p.arg, p) for p in parameters(node) if p.arg not in skip]
        params += [_Param(name, where) for name, where in sizes]
        written = defaults(node)
        given = self._first_constant_call(
            node.name, [p.arg for p in [*node.args.posonlyargs, *node.args.args]],
            [p.arg for p in node.args.kwonlyargs] + [name for name, _ in sizes])
        bound: dict[str, Entry] = {}
        missing: list[_Param] = []
        for p in params:
            if p.arg in self.overrides:
                bound[p.arg] = Constant(self.overrides[p.arg])
            elif p.arg in self.params:
                bound[p.arg] = Constant(self._given(p.arg, self.params[p.arg]))
            elif p.arg in self.directives:
                bound[p.arg] = self._directive_value(self.directives[p.arg])
            elif p.arg in given:
                bound[p.arg] = Constant(given[p.arg])
            elif p.arg in written:
                function = self._tilelang_function(written[p.arg])
                bound[p.arg] = Constant(function) if function else \
                    self._fold(written[p.arg])
            else:
                missing.append(p)
        if missing:
            shape_error(missing_message(node.name, [p.arg for p in missing]),
                        missing[0].where)
        functions = {k: v.value.path for k, v in bound.items()
                     if isinstance(v, Constant) and isinstance(v.value, TileLangFunction)}
        self.bound.update({k: v.value for k, v in bound.items()
                           if isinstance(v, Constant) and k not in functions})
        return bound, functions

    def _tilelang_function(self, node: ast.AST) -> "TileLangFunction | None":
        """`T.reduce_max` (not a dtype) as a value: the TileLang function it names."""
        path = self.imports.dotted(node)
        name = self.imports.t_name(node)
        if path and name is not None and lookup_dtype(name) is None:
            return TileLangFunction(path)
        return None

    def _given(self, name: str, value) -> object:
        if isinstance(value, ParamText):
            node = text_expression(value.text)
            if isinstance(node, ast.AST) and (function := self._tilelang_function(node)):
                return function
        return fold_given(self.folder.fold, self._names_something, name, value)

    def _names_something(self, word: str) -> bool:
        return word in self.env or self.imports.binds(word)

    def _directive_value(self, d: Directive) -> Entry:
        if function := self._tilelang_function(d.value):
            return Constant(function)
        try:
            return Constant(self.folder.fold(d.value))
        except NotConstant as exc:
            if isinstance(d.value, ast.Name) and not self._names_something(d.value.id):
                return Constant(d.value.id)     # `# params: op=sum`: the word it spells
            raise FrontendError(error("R102", f"`# params: {d.name}=...` is not a "
                                      f"compile-time value: {exc.why}", d.span)) from None
        except FrontendError as exc:          # its own position is inside the comment
            raise FrontendError(error("R102", f"`# params: {d.name}=...`: "
                                      f"{exc.diagnostic.message}", d.span)) from None

    def _argument(self, node: ast.AST) -> object:
        return self._tilelang_function(node) or self.folder.fold(node)

    def _first_constant_call(self, name: str, positional: list[str],
                             keyword_only: list[str]) -> dict[str, object]:
        calls = [n for n in ast.walk(self.tree) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Name) and n.func.id == name]
        for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset)):
            bound = self._bind_call(call, positional, keyword_only)
            if bound is not None:
                return bound
        return {}

    def _bind_call(self, call: ast.Call, positional: list[str],
                   keyword_only: list[str]) -> dict[str, object] | None:
        if len(call.args) > len(positional):
            return None
        try:
            bound = {p: self._argument(a) for p, a in zip(positional, call.args)}
            for kw in call.keywords:
                if kw.arg is None or kw.arg not in (*positional, *keyword_only) \
                        or kw.arg in bound:
                    return None
                bound[kw.arg] = self._argument(kw.value)
        except (NotConstant, FrontendError):
            return None
        return bound

