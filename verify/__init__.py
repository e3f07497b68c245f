"""Checking: the reducer epoch verifier, Z3 proofs, the oracle API and the CLI."""

# The one place the version is written: pyproject.toml reads it
# ([tool.setuptools.dynamic]) and `verify-reducer --version` prints it.
__version__ = "0.1.0"
