"""python3 -m labbench: what ./bench.sh runs."""
import sys

if sys.version_info < (3, 9):
    sys.exit(f"ERROR: bench needs Python 3.9+ (this is {sys.version.split()[0]})")

from .main import main  # noqa: E402  (after the version check)

sys.exit(main(sys.argv[1:]))
