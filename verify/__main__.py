"""`python -m verify_reducer.verify ...` is the `verify-reducer` command too."""
import sys

from verify_reducer.verify.cli.entry import main

sys.exit(main())
