"""verify-reducer: a verification-first reference interpreter and CUDA generator for
TileLang's deferred reductions (T.alloc_reducer / T.reducer_update / T.finalize_reducer).

The subpackages are `verify_reducer.spec` (the IR, frontend, op table, physical plan),
`verify_reducer.interp` (interpreter, simulator), `verify_reducer.codegen` (layouts,
planners, CUDA) and `verify_reducer.verify` (verifier, proofs, CLI, fuzzing); the
public API for using the project as an oracle is `verify_reducer.oracle`.

In the source tree the subpackages are the folders at its top (spec/, interp/, codegen/,
verify/); an installed copy holds them inside this package. Running from a checkout,
this package's search path reaches the top of the tree so both layouts import the same
way — and no generic top-level name (`spec`, `verify`, ...) is ever imported.

As a library: `verify_reducer.oracle` is the public API (load, witness inputs, the
reference with its bounds, compare and check of any backend, the built-in backends),
`verify_reducer.pytest_plugin` the pytest plugin (fixture `reducer_oracle`, marker
`reducer_backend`). See docs/oracle.md."""
from pathlib import Path as _Path

__version__ = "0.2.0"

_HERE = _Path(__file__).resolve().parent
if not (_HERE / "spec").is_dir():            # a checkout: spec/ is a sibling of this folder
    __path__.append(str(_HERE.parent))       # noqa: F821 (a package's own __path__)
