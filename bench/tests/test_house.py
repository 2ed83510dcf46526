"""The house's shape, checked (issue 38): no import circle in bench/labbench, read with ast, no
import inside a function (a circle dodged is still a circle), and no module or function past the
sizes a newcomer reads in one sitting."""
import ast
import unittest
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "labbench"
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 50


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


if __name__ == "__main__":
    unittest.main()
