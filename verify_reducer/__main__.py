"""`python -m verify_reducer ...` is the `verify-reducer` command."""
import sys

from verify_reducer.verify.cli.entry import main

sys.exit(main())
