"""TileLang's eager `@tilelang.jit` style, read without running it: the decorated
function's own body is the kernel (tilelang/language/eager/builder.py traces it).

    @tilelang.jit
    def rms_norm(A, blk_m):
        M, N = T.const("M, N")              # sizes matched against A at call time
        A: T.Tensor((M, N), T.float)        # A is a tensor parameter (match_buffer)
        B = T.empty((M, N), T.float)        # an output, appended after the inputs
        with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
            ...
        return B

is read as a factory (spec.frontend.factories) whose parameters are its non-tensor
parameters and its sizes (the `T.const` names, and names a tensor annotation uses
without defining them, as TileLang makes them symbolic), and whose prim_func takes the
tensor parameters in signature order, then the `T.empty` outputs in the order created.
There is no tensor to match a size against, so each size is bound as a factory
parameter is (`--param M=1024`, `# params:`, `--for-all`)."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from .errors import shape_error, unsupported
from .names import Imports

_TENSOR = ("Tensor", "Buffer")


@dataclass
class EagerShape:
    """What the body before `with T.Kernel` declares."""
    tensors: dict[str, ast.expr] = field(default_factory=dict)   # param -> annotation
    sizes: list[tuple[str, ast.AST]] = field(default_factory=list)   # name, where
    outputs: list[tuple[str, ast.Call, ast.stmt]] = field(default_factory=list)
    constants: list[ast.stmt] = field(default_factory=list)       # assignments, asserts
    kernel: ast.With | None = None


def is_eager(imports: Imports, node: ast.FunctionDef) -> bool:
    """A `@tilelang.jit` function whose own body holds the `with T.Kernel(...)`."""
    jit = any((imports.dotted(d.func if isinstance(d, ast.Call) else d) or "")
              .startswith("tilelang.") and (imports.dotted(
                  d.func if isinstance(d, ast.Call) else d) or "").endswith(".jit")
              for d in node.decorator_list)
    return jit and _kernel_statement(imports, node) is not None


def _kernel_statement(imports: Imports, node: ast.FunctionDef) -> ast.With | None:
    for stmt in node.body:
        if isinstance(stmt, ast.With) and stmt.items:
            expr = stmt.items[0].context_expr
            if isinstance(expr, ast.Call) and imports.t_name(expr.func) == "Kernel":
                return stmt
    return None


def read_shape(imports: Imports, node: ast.FunctionDef, known) -> EagerShape:
    """The declarations before the kernel; known(name) says whether a name is defined
    (a module name, an import, a parameter, a size or constant declared so far)."""
    shape = EagerShape()
    params = {a.arg for a in [*node.args.posonlyargs, *node.args.args,
                              *node.args.kwonlyargs]}
    for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
        if a.annotation is not None and _tensor_annotation(imports, a.annotation):
            shape.tensors[a.arg] = _as_call(a.annotation)
    declared: set[str] = set()
    for stmt in node.body:
        if stmt is _kernel_statement(imports, node):
            shape.kernel = stmt
            break
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue                                        # a docstring
        if isinstance(stmt, ast.AnnAssign) and stmt.value is None \
                and isinstance(stmt.target, ast.Name):
            if stmt.target.id not in params or \
                    not _tensor_annotation(imports, stmt.annotation):
                unsupported(f"`{ast.unparse(stmt)}`: only a parameter may be annotated "
                            f"with T.Tensor in an eager kernel", stmt)
            shape.tensors[stmt.target.id] = _as_call(stmt.annotation)
            continue
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            name = imports.t_name(stmt.value.func)
            if name in _SIZE_DECLARATIONS:
                # T.const sizes are specialized per call; a T.dynamic one serves every
                # size at run time, and is checked at the size bound (--param), or
                # quantified by --for-all, like a T.const one (docs/limits.md)
                shape.sizes += _size_names(stmt, name)
                declared.update(n for n, _ in _size_names(stmt, name))
                continue
            if name == "empty":
                if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
                    unsupported("`T.empty` must be assigned to one name", stmt)
                shape.outputs.append((stmt.targets[0].id, stmt.value, stmt))
                continue
        if isinstance(stmt, ast.Assert):
            shape.constants.append(stmt)        # evaluated as a factory's assert is
            continue
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            shape.constants.append(stmt)
            for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):
                declared.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
            continue
        unsupported(f"{type(stmt).__name__} statements before `with T.Kernel(...)` are not "
                    f"supported in an eager kernel (only T.const, annotations, T.empty, "
                    f"constants and asserts)", stmt)
    # names a tensor annotation uses without defining them: sizes, as TileLang makes them
    for ann in [*shape.tensors.values(), *(call for _, call, _ in shape.outputs)]:
        for n in ast.walk(ann):
            if isinstance(n, ast.Name) and n.id not in declared and n.id not in params \
                    and not known(n.id) and n.id not in (s for s, _ in shape.sizes):
                shape.sizes.append((n.id, n))
    return shape


# the calls that declare an eager kernel's sizes (T.symbolic: TileLang's old T.dynamic)
_SIZE_DECLARATIONS = ("const", "dynamic", "symbolic")
_SIZE_DTYPES = ("int32", "int64")


def _size_names(stmt: ast.Assign, name: str) -> list[tuple[str, ast.AST]]:
    """The names `M, N = T.const("M, N")` (or T.dynamic, with an optional index dtype
    as TileLang takes it) declares, each with where."""
    call = stmt.value
    args = list(call.args) + [kw.value for kw in call.keywords if kw.arg == "dtype"]
    if not 1 <= len(args) <= 2 or any(kw.arg != "dtype" for kw in call.keywords) or \
            not isinstance(args[0], ast.Constant) or not isinstance(args[0].value, str):
        shape_error(f"T.{name} takes one string of size names and an optional index "
                    f"dtype (`T.{name}(\"M, N\")`, `T.{name}(\"M\", \"int64\")`)", call)
    if len(args) == 2 and not (isinstance(args[1], ast.Constant)
                               and args[1].value in _SIZE_DTYPES) and \
            not (isinstance(args[1], ast.Attribute) and args[1].attr in _SIZE_DTYPES):
        shape_error(f"T.{name}'s dtype must be int32 or int64, got `{ast.unparse(args[1])}`",
                    args[1])
    names = [n for n in re.split(r"[,\s]+", args[0].value) if n]
    targets = [n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if targets != names:
        shape_error(f"T.{name} declares {', '.join(names)} but binds "
                    f"{', '.join(targets) or 'nothing'}: name them alike", stmt)
    return [(n, call) for n in names]


def _tensor_annotation(imports: Imports, ann: ast.AST) -> bool:
    target = ann.func if isinstance(ann, ast.Call) else \
        ann.value if isinstance(ann, ast.Subscript) else ann
    return imports.t_name(target) in _TENSOR


def _as_call(ann: ast.expr) -> ast.expr:
    """`T.Tensor[[M, N], dtype]` as `T.Tensor([M, N], dtype)` (the same meaning)."""
    if not isinstance(ann, ast.Subscript):
        return ann
    parts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
    return ast.copy_location(ast.Call(ann.value, list(parts), []), ann)


def prim_func(node: ast.FunctionDef, shape: EagerShape) -> ast.FunctionDef:
    """The prim_func the eager body traces to: the tensor parameters in signature
    order, then the outputs, and the kernel statement; `return` must name the outputs."""
    args = []
    for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
        if a.arg in shape.tensors:
            args.append(ast.copy_location(ast.arg(a.arg, shape.tensors[a.arg]), a))
    for name, call, stmt in shape.outputs:
        tensor = ast.copy_location(ast.Attribute(call.func.value, "Tensor", ast.Load()),
                                   call.func) if isinstance(call.func, ast.Attribute) \
            else None
        if tensor is None:
            unsupported("`empty` imported by name is not supported: write `T.empty`", call)
        ann = ast.copy_location(ast.Call(tensor, list(call.args), list(call.keywords)),
                                call)
        args.append(ast.copy_location(ast.arg(name, ann), stmt))
    after = node.body[node.body.index(shape.kernel) + 1:]
    outputs = [n for n, _, _ in shape.outputs]
    for stmt in after:
        if isinstance(stmt, ast.Return):
            named = [] if stmt.value is None else \
                [e.id if isinstance(e, ast.Name) else None for e in
                 (stmt.value.elts if isinstance(stmt.value, ast.Tuple) else [stmt.value])]
            if named != outputs:
                unsupported(f"an eager kernel returns its `T.empty` outputs "
                            f"({', '.join(outputs) or 'none'}), in the order created",
                            stmt)
        else:
            unsupported("statements after the `with T.Kernel(...)` block are not "
                        "supported", stmt)
    func = ast.FunctionDef(name=node.name, args=ast.arguments(
        posonlyargs=[], args=args, vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
        defaults=[]), body=[shape.kernel], decorator_list=[], returns=None,
        type_comment=None)
    if hasattr(func, "type_params"):
        func.type_params = []
    return ast.copy_location(func, node)
