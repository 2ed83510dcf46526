"""The house's shape, checked (issue 38): no import circle in bench/labbench, read with ast, no
import inside a function (a circle dodged is still a circle), and no module or function past the
sizes a newcomer reads in one sitting."""
import ast
import re
import unittest
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "labbench"
ROOT = PACKAGE.parents[1]
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 50
MAX_JAVA_METHOD_LINES = 60
MAX_PACKAGE_FILES = 12
JAVA_METHOD = re.compile(r"^\s+(?:(?:public|private|protected|static|final|synchronized|abstract)\s+)*"
                         r"(?:<[^>]+>\s+)?[\w<>\[\], ?.]+\s+(\w+)\s*\([^;]*$")
JAVA_LITERAL = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')


def module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules():
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported(name, path, known):
    """The labbench modules a module imports at its top level: `from . import x` names module x
    where x is one, else the package; implicit imports of parent packages are not arrows."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            for a in node.names:
                target = f"{base}.{a.name}"
                out.add(target if target in known else base)
    return {m for m in out if m in known and m != name}


def graph():
    known = modules()
    return {name: imported(name, path, known) for name, path in known.items()}


def circles(g):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def functions(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


class House(unittest.TestCase):
    def test_no_import_circle(self):
        self.assertEqual([], circles(graph()))

    def test_no_import_inside_a_function(self):
        inside = [f"{module_name(p)}:{f.name}:{n.lineno}" for p in modules().values() for f in functions(p)
                  for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))]
        self.assertEqual([], inside)

    def test_the_core_never_imports_a_plugin(self):
        g = graph()
        plugins = {m for m in g if m.startswith(("labbench.scenarios.", "labbench.loadgens."))}
        core = {m for m in g if m not in plugins and m != "labbench.plugins" and m != "labbench.main"}
        self.assertEqual([], sorted(f"{m} -> {t}" for m in core for t in g[m] & plugins))

    def test_modules_and_functions_a_newcomer_reads_in_one_sitting(self):
        files = [p for p in sorted(PACKAGE.rglob("*.py")) + sorted(PACKAGE.parent.glob("*.py"))
                 + sorted((PACKAGE.parent / "tools").glob("*.py")) if not p.name.startswith("test_")]
        long_modules = [f"{p.relative_to(PACKAGE.parent)}: {n}" for p in files
                        for n in [len(p.read_text().splitlines())] if n > MAX_MODULE_LINES]
        long_functions = [f"{p.relative_to(PACKAGE.parent)}:{f.name}: {f.end_lineno - f.lineno + 1}" for p in files
                          for f in functions(p) if f.end_lineno - f.lineno + 1 > MAX_FUNCTION_LINES]
        self.assertEqual(([], []), (long_modules, long_functions))

    def test_java_methods_and_packages_a_newcomer_reads_in_one_sitting(self):
        long_methods = [f"{p.relative_to(ROOT)}:{name}: {n}" for p in sorted(ROOT.glob("*/src/main/java/**/*.java"))
                        for name, n in java_methods(p) if n > MAX_JAVA_METHOD_LINES]
        counts = {}
        for p in (ROOT / "lab-common" / "src" / "main" / "java").rglob("*.java"):
            counts[p.parent] = counts.get(p.parent, 0) + 1
        crowded = [f"{d.relative_to(ROOT)}: {n}" for d, n in counts.items() if n > MAX_PACKAGE_FILES]
        self.assertEqual(([], []), (long_methods, crowded))


def java_methods(path):
    """(name, lines) of each method or constructor of a Java file: braces counted outside string and
    char literals and comments."""
    lines = [JAVA_LITERAL.sub('""', line.split("//")[0]) for line in path.read_text().splitlines()]
    out = []
    for i, line in enumerate(lines):
        m = JAVA_METHOD.match(line)
        if not m or re.match(r"\s*(if|for|while|switch|return|new|else|catch|throw)\b", line) or "=" in line.split("(")[0]:
            continue
        depth, started = 0, False
        for j in range(i, len(lines)):
            depth += lines[j].count("{") - lines[j].count("}")
            started = started or "{" in lines[j]
            if not started and lines[j].rstrip().endswith(";"):
                break
            if started and depth <= 0:
                out.append((m.group(1), j - i + 1))
                break
    return out


if __name__ == "__main__":
    unittest.main()
