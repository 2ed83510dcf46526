"""The knobs table (docs/settings.md, linked from the README) cannot drift: every bench variable, with
its default exactly, and no other."""
import re
import unittest
from pathlib import Path

from labbench import plugins  # noqa: F401  (registers the scenarios: their settings are in the table)
from labbench.settings import defaults

SETTINGS = Path(__file__).resolve().parents[2] / "docs" / "settings.md"


class KnobsTableTest(unittest.TestCase):
    def test_the_table_is_the_settings(self):
        rows = re.findall(r"^\| `([A-Z_]+)` \| (`[^`]*`|\(empty\)) \|", SETTINGS.read_text(), re.M)
        table = {name: "" if default == "(empty)" else default.strip("`") for name, default in rows}
        self.assertEqual(table, defaults())


if __name__ == "__main__":
    unittest.main()
