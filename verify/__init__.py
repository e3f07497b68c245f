"""Checking, one subpackage per concern: the epoch verifier (epochs), the Z3 proofs
(proofs), size families (family), the oracle's load/check/run/judge machinery (oracle),
the command line (cli) and differential fuzzing (fuzzing)."""
