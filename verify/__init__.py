"""Checking: the reducer epoch verifier, Z3 proofs, the CLI and fuzzing."""
