"""Size families (docs/design.md §21): a program proved for every value of its declared
sizes — the directives checked and the program lowered with symbolic sizes (checker),
the bounds, decision and trip-count obligations (proofs), and grid-level exactly-once
(sources)."""
