"""The layers DESIGN.md draws, checked on the source: data flows one way, renderers only format,
and no third-party private attribute is used (a library's internals may change in any release)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

SRC = REPO / "src" / "ckptreport"


def _module(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_nodes(tree: ast.AST):
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:`` (an annotation's import is no
    dependency: it never runs)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            yield from (n for child in node.orelse for n in [child, *_runtime_nodes(child)])
            continue
        yield node
        yield from _runtime_nodes(node)


def _imports(path: Path) -> set[str]:
    """Every ckptreport module ``path`` imports when it runs, at the top or inside a function."""
    me = _module(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found = set()
    for node in _runtime_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("ckptreport")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("ckptreport"):
                continue
            for alias in node.names:  # `from . import display` imports a module
                sub = f"{target}.{alias.name}"
                found.add(sub if (SRC.parent / (sub.replace(".", "/") + ".py")).exists() else target)
    return found - {me}


def graph() -> dict[str, set[str]]:
    return {_module(p): _imports(p) for p in SRC.rglob("*.py")}


def _cycle(g: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(g.get(node, ())):
            if state.get(nxt) == 1:
                return path + [node, nxt]
            if nxt not in state and (found := visit(nxt, path + [node])):
                return found
        state[node] = 2
        return None

    for start in sorted(g):
        if start not in state and (found := visit(start, [])):
            return found
    return None


def test_no_module_imports_one_that_imports_it_back():
    g = graph()
    assert "ckptreport.report" in g and "ckptreport.render.brief" in g
    assert _cycle(g) is None, " -> ".join(_cycle(g))


def test_the_cycle_check_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) is not None
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_renderers_format_what_the_compute_stage_produced():
    """No renderer runs the engine or the build; the compute stage imports no renderer."""
    g = graph()
    for name, deps in g.items():
        if name.startswith("ckptreport.render"):
            assert not deps & {"ckptreport.engine", "ckptreport.build", "ckptreport.explain"}, name
    for name in ("ckptreport.report", "ckptreport.engine", "ckptreport.load", "ckptreport.explain"):
        assert not any(d.startswith("ckptreport.render") or d == "ckptreport.build" for d in g[name]), name


def test_no_private_attribute_of_another_library():
    """`x._name` only on our own objects (self, cls) and never on a library's."""
    offenders = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}: .{node.attr}")
    assert offenders == []


@pytest.mark.parametrize("argv", [
    ["--help"],
    ["validate"],
    ["explain", "llama3-405b", "dgx-h100", "superpod-good", "--gpus", "1024", "--interval", "30min"],
    ["explain", "llama3-405b", "dgx-h100", "superpod-good", "--gpus", "1024", "--interval", "30min", "--json"],
])
def test_quick_commands_import_only_what_they_use(argv):
    """--help, validate and explain start at once: no pandas, pint, pyarrow, openpyxl, matplotlib or
    WeasyPrint is imported (each costs a tenth of a second or more)."""
    heavy = ("pandas", "pint", "pyarrow", "openpyxl", "matplotlib", "weasyprint")
    code = ("import sys\nfrom ckptreport.cli import main\n"
            f"try:\n    main({argv!r})\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            f"print(sorted(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr
