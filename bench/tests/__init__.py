"""The bench's unit and characterisation tests (python3 -m unittest discover -s bench/tests -t bench,
with bench on PYTHONPATH). Like every entry point, they load the lab's scenarios and load
generators first (labbench/plugins.py registers them with the core)."""
from labbench import plugins  # noqa: F401
