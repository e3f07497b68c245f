"""Checking: the reducer epoch verifier, Z3 proofs, the oracle API and the CLI."""
