"""Size families (docs/design.md §21): a program proved for every value of its declared
sizes — the directives checked and the program lowered with symbolic sizes (checker),
the bounds, decision and trip-count obligations (proofs), grid-level exactly-once
(sources), and the program run at the smallest counterexample sizes, the interpreter
and the simulator each to its own first error (instance)."""
