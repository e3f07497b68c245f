"""`python -m verify_reducer ...` is the `verify-reducer` command."""
from verify_reducer.verify.cli.entry import run

run()
