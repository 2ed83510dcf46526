"""Every relative link in README.md and docs/**/*.md leads somewhere (issue 38): its file or directory
exists, and an `#anchor` into a Markdown file names one of that file's headings, slugged as GitHub
slugs them. External http(s) links are not fetched. Run: PYTHONPATH=bench python3 -m unittest discover -s bench/tests -t bench -p test_links.py"""
import re
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

FENCE = re.compile(r"^ {0,3}(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# [text](target) and ![alt](target), an optional "title" after the target; link text may hold one
# level of brackets ([traps #41] inside a sentence's brackets).
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^()\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)=\"([^\"]+)\"", re.I)
HTML_ANCHOR = re.compile(r"<a\b[^>]*?\b(?:name|id)=\"([^\"]+)\"", re.I)
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)   # http:, https:, mailto:, ...


def markdown_files():
    """README.md and every page under docs/, the run output a sample keeps beside it (raw/) aside."""
    return [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").rglob("*.md") if "raw" not in p.parts)


def prose_lines(text):
    """The lines outside fenced code blocks, inline code spans blanked: a link in code is not a link."""
    fenced = None
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            fenced = None if fenced == m.group(1) else (fenced or m.group(1))
            continue
        if fenced is None:
            yield n, line


def slug(heading):
    """GitHub's anchor for a heading: its text as rendered (code spans' content, a link's text, no
    tags), lowercased, every character but letters, digits, '-' and '_' and spaces dropped, each space
    a '-'."""
    text = CODE_SPAN.sub(lambda m: m.group(2), heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


_anchors = {}


def anchors(path):
    """The anchors a Markdown file has: one per heading (a repeated one gets -1, -2, ...), and any
    <a name=...> / id=...."""
    if path not in _anchors:
        seen, found = {}, set()
        for _, line in prose_lines(path.read_text(encoding="utf-8")):
            m = HEADING.match(line)
            if m:
                base = slug(m.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
            found.update(HTML_ANCHOR.findall(line))
        _anchors[path] = found
    return _anchors[path]


def links(path):
    """(line number, target) of every link in a Markdown file, code left out; a link's text may run
    over a line break."""
    numbered = dict(prose_lines(path.read_text(encoding="utf-8")))
    lines = [CODE_SPAN.sub(lambda m: "x" * len(m.group(0)), numbered.get(n, ""))
             for n in range(1, max(numbered, default=0) + 1)]
    prose = "\n".join(lines)
    for pattern in (INLINE_LINK, HTML_LINK):
        for m in pattern.finditer(prose):
            yield prose.count("\n", 0, m.start(1)) + 1, m.group(1)
    for n, line in enumerate(lines, 1):
        m = REFERENCE_DEF.match(line)
        if m:
            yield n, m.group(1)


def broken(path, target):
    """Why a link from path to target leads nowhere, or None."""
    if EXTERNAL.match(target):
        return None
    file_part, _, anchor = target.partition("#")
    if file_part:
        dest = (ROOT / file_part.lstrip("/")) if file_part.startswith("/") else (path.parent / file_part)
        dest = Path(re.sub(r"%20", " ", str(dest)))
        if not dest.exists():
            return "no such file"
    else:
        dest = path
    if anchor and dest.suffix == ".md" and dest.is_file() and anchor not in anchors(dest.resolve()):
        return f"{dest.resolve().relative_to(ROOT)} has no heading #{anchor}"
    return None


def check():
    """(links checked, files read, the broken ones as 'file:line: target: why')."""
    checked, bad, files = 0, [], markdown_files()
    for path in files:
        for n, target in links(path):
            checked += 1
            why = broken(path, target)
            if why:
                bad.append(f"{path.relative_to(ROOT)}:{n}: {target}: {why}")
    return checked, len(files), bad


class LinksTest(unittest.TestCase):
    def test_every_relative_link_leads_somewhere(self):
        checked, files, bad = check()
        self.assertGreater(checked, 400, "the link scan found almost no links: is the pattern broken?")
        self.assertEqual(bad, [], f"{len(bad)} of {checked} links in {files} files lead nowhere:\n" + "\n".join(bad))

    def test_slugs_are_githubs(self):
        self.assertEqual(slug("41. A shorter window or a lighter load does not shorten a warm-up"),
                         "41-a-shorter-window-or-a-lighter-load-does-not-shorten-a-warm-up")
        self.assertEqual(slug("The write-up's workload: 10 rows as JSON, 4 → 500 concurrent requests"),
                         "the-write-ups-workload-10-rows-as-json-4--500-concurrent-requests")
        self.assertEqual(slug("CPU by layer (`PROFILE=1`)"), "cpu-by-layer-profile1")


if __name__ == "__main__":
    unittest.main()
