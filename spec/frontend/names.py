"""Which local names denote TileLang. A file may say `import tilelang.language as T`,
`from tilelang import language as T`, `import tilelang` (then `tilelang.language.copy`),
`import tilelang as tl`, or `from tilelang.language import Kernel`. We record what each
imported name stands for (a dotted module path) and resolve `T.copy`-like expressions to
the bare TileLang name ("copy") without importing anything."""
from __future__ import annotations

import ast

LANGUAGE = "tilelang.language"

# What `from <module> import *` binds, for the TileLang modules whose star import kernels
# use (tile-ai/tilelang a35008a: tilelang/autotuner/__init__.py). A name a star import
# binds is known without importing the module; any other module's star import binds
# nothing we know of, and its names stay unknown (their uses are diagnosed).
STAR_EXPORTS: dict[str, tuple[str, ...]] = {
    "tilelang.autotuner": ("autotune", "AutoTuner", "set_autotune_inputs",
                           "get_autotune_inputs"),
}


class Imports:
    def __init__(self):
        self.paths: dict[str, str] = {}     # local name -> dotted path it was imported as

    def add(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.paths[alias.asname] = alias.name
                else:
                    # `import tilelang.language` binds only the top package name
                    top = alias.name.split(".")[0]
                    self.paths[top] = top
            return
        if node.level or not node.module:
            return                            # relative imports never name tilelang
        for alias in node.names:
            if alias.name == "*":
                for name in STAR_EXPORTS.get(node.module, ()):
                    self.paths[name] = f"{node.module}.{name}"
                continue
            self.paths[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def dotted(self, node: ast.AST) -> str | None:
        """The full dotted path of `a.b.c` when `a` is an imported name, else None."""
        if isinstance(node, ast.Name):
            return self.paths.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def t_name(self, node: ast.AST) -> str | None:
        """"copy" for `T.copy` / `tilelang.language.copy` / an imported `copy`; None when
        the expression does not name something in tilelang.language."""
        path = self.dotted(node)
        if path and path.startswith(LANGUAGE + "."):
            rest = path[len(LANGUAGE) + 1:]
            return rest if "." not in rest else None
        return None

    def binds(self, name: str) -> bool:
        return name in self.paths
