"""docs/settings.md (linked from the README) cannot drift: its tables are the bench's settings
table itself (settings.groups(), knobs.markdown), every variable with its default and what it sets."""
import unittest
from pathlib import Path

from labbench import knobs, settings

SETTINGS = Path(__file__).resolve().parents[2] / "docs" / "settings.md"
START = "<!-- made from the bench's settings table (labbench.settings.groups(), knobs.markdown): edit it there -->\n"
END = "<!-- end of the settings table -->\n"


class SettingsTableTest(unittest.TestCase):
    def test_the_page_is_the_table(self):
        text = SETTINGS.read_text()
        self.assertIn(START, text)
        self.assertIn(END, text)
        page = text[text.index(START) + len(START):text.index(END)]
        self.maxDiff = None
        self.assertEqual(knobs.markdown(settings.groups()), page,
                         "docs/settings.md drifted from the bench's settings: run python3 bench/tools/settings-table.py")

    def test_every_variable_once_with_its_default(self):
        rows = [s for _, group in settings.groups() for s in group]
        self.assertEqual(len(rows), len({s.name for s in rows}))
        self.assertEqual({s.name: s.default for s in rows}, settings.defaults())


if __name__ == "__main__":
    unittest.main()
