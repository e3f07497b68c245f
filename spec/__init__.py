"""The language of verify-reducer: dtypes, the op/monoid table, source spans,
diagnostics, the logical IR and the TileLang-source frontend.

Nothing here imports the other packages (interp, verify, codegen)."""
