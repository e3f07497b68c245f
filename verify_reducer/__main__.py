"""`python -m verify_reducer ...` is the `verify-reducer` command."""
import sys

from verify_reducer.verify.cli.commands import main

sys.exit(main())
