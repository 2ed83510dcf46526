"""README's knobs table cannot drift: every bench variable, with its default exactly, and no other."""
import re
import unittest
from pathlib import Path

from labbench import plugins  # noqa: F401  (registers the scenarios: their settings are in the table)
from labbench.settings import defaults

README = Path(__file__).resolve().parents[2] / "README.md"


class KnobsTableTest(unittest.TestCase):
    def test_the_table_is_the_settings(self):
        rows = re.findall(r"^\| `([A-Z_]+)` \| (`[^`]*`|\(empty\)) \|", README.read_text(), re.M)
        table = {name: "" if default == "(empty)" else default.strip("`") for name, default in rows}
        self.assertEqual(table, defaults())


if __name__ == "__main__":
    unittest.main()
