#!/usr/bin/env python3
"""Rewrite docs/settings.md's tables from the bench's settings table (bench/tests/test_readme.py
checks that they are equal). Run it after adding or changing a setting:
    python3 bench/tools/settings-table.py"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from labbench import knobs, plugins, settings  # noqa: E402,F401  (plugins: every scenario's settings)

START = "<!-- made from the bench's settings table (labbench.settings.groups(), knobs.markdown): edit it there -->\n"
END = "<!-- end of the settings table -->\n"

page = ROOT / "docs" / "settings.md"
text = page.read_text()
page.write_text(text[:text.index(START) + len(START)] + knobs.markdown(settings.groups()) + text[text.index(END):])
print(f"rewrote {page.relative_to(ROOT)}")
