"""The epoch verifier (docs/design.md §4): the control-flow graph of a kernel (cfg), the
per-reducer epoch state machine solved over it (states), the rules that look at one
statement (rules) and where it sits (scopes), finalize divergence (divergence, R207) and
reducer index bounds (bounds, R209). `checker.check_func` is the entry point."""
