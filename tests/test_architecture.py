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


def _from_imports(path: Path, nodes):
    """(line, module, name) of each `from ckptreport... import name` among ``nodes`` of ``path``,
    relative imports resolved."""
    me = _module(path) if path.is_relative_to(SRC) else ""
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("ckptreport"):
                for alias in node.names:
                    yield node.lineno, target, alias.name


def _imports(path: Path) -> set[str]:
    """Every ckptreport module ``path`` imports when it runs, at the top or inside a function."""
    nodes = list(_runtime_nodes(ast.parse(path.read_text())))
    found = {a.name for node in nodes if isinstance(node, ast.Import) for a in node.names
             if a.name.startswith("ckptreport")}
    for _, target, name in _from_imports(path, nodes):  # `from . import display` imports a module
        sub = f"{target}.{name}"
        found.add(sub if _module_file(sub) is not None else target)
    return found - {_module(path)}


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


def _reached(g: dict[str, set[str]], start: str) -> dict[str, str]:
    """Every module ``start`` reaches through imports, each with the module that imports it (the path
    back to ``start`` can be read off)."""
    via, todo = {}, [start]
    while todo:
        here = todo.pop()
        for nxt in sorted(g.get(here, ())):
            if nxt not in via and nxt != start:
                via[nxt] = here
                todo.append(nxt)
    return via


def _path(via: dict[str, str], start: str, end: str) -> str:
    chain = [end]
    while chain[-1] != start:
        chain.append(via[chain[-1]])
    return " -> ".join(reversed(chain))


# What a renderer must never reach, through any chain of imports: the stages that compute
COMPUTING = {f"ckptreport.{m}" for m in ("engine", "uncertainty", "calibration", "load", "measured", "build",
                                          "report", "explain", "plan", "diff", "api", "page")}
COMPUTE_STAGE = [f"ckptreport.{m}" for m in ("report", "engine", "load", "plan", "provenance", "explain", "uncertainty",
                                              "calibration", "rule", "columns", "expr", "inputs", "units", "page")]


def _renderers_reaching(g: dict[str, set[str]], forbidden: set[str]) -> list[str]:
    out = []
    for name in sorted(g):
        if name.startswith("ckptreport.render"):
            via = _reached(g, name)
            out += [_path(via, name, bad) for bad in sorted(forbidden & set(via))]
    return out


def test_renderers_only_format():
    """No renderer reaches, through any chain of imports (at the top or inside a function), a module
    that computes: what it shows was computed in the compute stage and held on the Report."""
    assert _renderers_reaching(graph(), COMPUTING) == []


def test_the_renderer_check_sees_through_other_modules():
    """A renderer calling a helper that runs the engine (the Sensitivity sheet once called
    uncertainty.Evaluator, which runs engine.compute) is caught however indirect."""
    g = {"ckptreport.render.sheet": {"ckptreport.helper"}, "ckptreport.helper": {"ckptreport.uncertainty"},
         "ckptreport.uncertainty": {"ckptreport.engine"}}
    found = _renderers_reaching(g, {"ckptreport.engine"})
    assert found == ["ckptreport.render.sheet -> ckptreport.helper -> ckptreport.uncertainty -> ckptreport.engine"]


def test_the_compute_stage_reaches_no_renderer():
    g = graph()
    for name in COMPUTE_STAGE:
        via = _reached(g, name)
        assert not [m for m in via if m.startswith("ckptreport.render") or m == "ckptreport.build"], name


def _defined(path: Path) -> set[str]:
    """The names a module defines at its top level (functions, classes, assignments)."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _module_file(module: str) -> Path | None:
    base = SRC.parent / module.replace(".", "/")
    return next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.exists()), None)


def _imported_names(path: Path):
    """(line, module, name) of each `from ckptreport... import name` in ``path``, anywhere in it."""
    return _from_imports(path, ast.walk(ast.parse(path.read_text())))


def test_every_name_has_one_address():
    """A name is imported from the module that defines it, never from one that imported it (a
    re-export gives a name two addresses); package __init__ files aside. Source, tests, benchmarks
    and examples alike."""
    offenders = []
    files = [*SRC.rglob("*.py"), *(REPO / "tests").glob("*.py"), *(REPO / "benchmarks").glob("*.py"),
             *(REPO / "examples").glob("*.py")]
    for path in files:
        for line, module, name in _imported_names(path):
            home = _module_file(module)
            if home is None or home.name == "__init__.py" or _module_file(f"{module}.{name}") is not None:
                continue  # a package (its __init__ may re-export), or a submodule
            if name not in _defined(home):
                offenders.append(f"{path.relative_to(REPO)}:{line}: {name} from {module}, which does not define it")
    assert offenders == []


def test_the_one_address_check_finds_a_re_export(tmp_path):
    fake = tmp_path / "m.py"
    fake.write_text("from ckptreport.engine import dimensions\n")  # defined in plan.py, not engine.py
    found = [(m, n) for _, m, n in _imported_names(fake) if n not in _defined(_module_file(m))]
    assert found == [("ckptreport.engine", "dimensions")]


def _functions(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node.lineno, node.end_lineno - node.lineno + 1


def test_no_function_over_80_lines():
    long = [f"{p.relative_to(REPO)}:{line} {name} ({n} lines)" for p in SRC.rglob("*.py")
            for name, line, n in _functions(p) if n > 80]
    assert long == []


def test_no_renderer_over_500_lines():
    """The rooms stay small enough to see whole: a new sheet or table is a new module beside them."""
    big = [f"{p.relative_to(REPO)} ({n} lines)" for p in (SRC / "render").rglob("*.py")
           if (n := len(p.read_text().splitlines())) > 500]
    assert big == []


def _prose(path: Path) -> list[str]:
    """String literals of ``path`` that read as prose (eight words or more), but for docstrings and
    the messages of errors and progress."""
    tree = ast.parse(path.read_text())
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node) is not None:
            skip.add(id(node.body[0].value))
        if isinstance(node, ast.Call):
            func = ast.unparse(node.func)
            if "Error" in func or "progress" in func:
                skip |= {id(n) for n in ast.walk(node)}
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in skip and len(n.value.split()) >= 8]


def test_the_briefs_prose_lives_in_the_template():
    """render/brief.py formats figures; the sentences a director reads are in templates/brief.html.j2."""
    assert _prose(SRC / "render" / "brief.py") == []
    assert "Of the options that meet the" in (REPO / "templates" / "brief.html.j2").read_text()


def test_the_rooms_hold_what_their_names_say():
    """The cross product is plan.py's, provenance provenance.py's; load.py reads and validates."""
    assert {"dimensions", "combinations", "cross_product", "plan_rows", "summary_point", "Point"} <= _defined(
        SRC / "plan.py")
    assert {"Prov", "provenance", "basis"} <= _defined(SRC / "provenance.py")
    assert not {"dimensions", "combinations", "plan_rows", "provenance", "Prov"} & _defined(SRC / "load.py")
    assert "templates_dir" in _defined(SRC / "paths.py")


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
