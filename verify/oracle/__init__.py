"""The oracle's machinery behind `verify_reducer.oracle` and the CLI: load, check and
run a program on a backend (pipeline), kernel inputs (inputs) and witness inputs
(witness, witness_roles, witness_audit), judging a backend's outputs against the
interpreter (judge), blocks as the unit of dynamic checking (blocks) and what a run will
cost (cost), and the verdict a program file declares (expect)."""
