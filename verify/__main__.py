"""`python -m verify_reducer.verify ...` is the `verify-reducer` command too."""
import sys

from verify_reducer.verify.cli.commands import main

sys.exit(main())
