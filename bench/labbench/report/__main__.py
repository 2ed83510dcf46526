"""python3 -m labbench.report RUN_DIR: rebuild a run's reports (see labbench/report/__init__.py)."""
import sys

from .. import plugins  # noqa: F401  (registers the scenarios and load generators)
from . import main

sys.exit(main(sys.argv))
