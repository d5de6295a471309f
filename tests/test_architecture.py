"""The stages DESIGN.md draws, checked on the source: each a folder, a floor above the one below it
(base, read, model, answer, render, then the package's own entry points); data flows one way, no
import goes up a floor or round in a circle (``TYPE_CHECKING`` imports counted), renderers only format,
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
    """Every ckptreport module ``path`` imports: at the top, inside a function, and under ``if
    TYPE_CHECKING:`` (an annotation's module is a dependency of the reader's: it names the type)."""
    nodes = list(ast.walk(ast.parse(path.read_text())))
    found = {
        a.name
        for node in nodes
        if isinstance(node, ast.Import)
        for a in node.names
        if a.name.startswith("ckptreport")
    }
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


FLOORS = (
    "base",
    "read",
    "model",
    "answer",
    "render",
)  # the stages' folders, bottom to top; then the package's
TOP = len(FLOORS)  # own modules: the entry points that chain the stages
ENTRY_POINTS = {"cli", "api", "build", "outputs", "publish", "diff", "docs", "probe"}


def floor(module: str) -> int:
    """The floor of a module: its stage's folder, the top for the package's own modules; the package
    itself (its version) stands under everything."""
    parts = module.split(".")
    if len(parts) == 1:
        return -1
    return FLOORS.index(parts[1]) if parts[1] in FLOORS else TOP


def test_every_module_lives_in_the_folder_of_its_stage():
    """The package's root holds only the entry points; everything else is in the folder of its stage
    (a new module chooses one), and the tests mirror the folders."""
    g = graph()
    assert {m.split(".")[1] for m in g if floor(m) == TOP} == ENTRY_POINTS
    assert {m.split(".")[1] for m in g if 0 <= floor(m) < TOP} == set(FLOORS)
    for stage in FLOORS:
        assert (REPO / "tests" / stage).is_dir(), stage


def test_no_import_goes_up_a_floor():
    """base <- read <- model <- answer <- render <- the entry points: a module imports only from its own
    floor or those below, under ``TYPE_CHECKING`` too."""
    g = graph()
    up = [
        f"{m} -> {t}"
        for m, targets in sorted(g.items())
        for t in sorted(targets)
        if floor(t) > floor(m)
    ]
    assert up == []


def test_the_floor_check_finds_an_arrow_up():
    g = {"ckptreport.read.load": {"ckptreport.model.plan"}}
    assert [f"{m} -> {t}" for m, ts in g.items() for t in ts if floor(t) > floor(m)] == [
        "ckptreport.read.load -> ckptreport.model.plan"
    ]


def test_no_module_imports_one_that_imports_it_back():
    g = graph()
    assert "ckptreport.answer.report" in g and "ckptreport.render.brief" in g
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


# What a renderer may read of the stages below it: definitions and types, never a module that computes
ANSWER_TYPES = {"ckptreport.answer.types", "ckptreport.answer.headline"}  # the answer as data
COMPUTING_BELOW = {
    f"ckptreport.{m}"
    for m in (
        "read.load",
        "read.measured",
        "read.importers",
        "model.evaluate",
        "model.plan",
        "model.rule",
    )
}


def computing(module: str) -> bool:
    """Whether a module computes: it reads the inputs' files, evaluates the model, picks an option, or
    produces the answer (every module of answer/ but its types), or it is an entry point."""
    return (
        module in COMPUTING_BELOW
        or floor(module) == TOP
        or (module.startswith("ckptreport.answer") and module not in ANSWER_TYPES)
    )


def _renderers_reaching(g: dict[str, set[str]], forbidden: set[str]) -> list[str]:
    out = []
    for name in sorted(g):
        if name.startswith("ckptreport.render"):
            via = _reached(g, name)
            out += [_path(via, name, bad) for bad in sorted(forbidden & set(via))]
    return out


def test_renderers_only_format():
    """No renderer reaches, through any chain of imports (at the top, inside a function or under
    ``TYPE_CHECKING``), a module that computes: what it shows was computed in the compute stage and held
    on the Report (``answer.types``)."""
    g = graph()
    assert _renderers_reaching(g, {m for m in g if computing(m)}) == []


def test_the_renderer_check_sees_through_other_modules():
    """A renderer calling a helper that runs the engine (the Sensitivity sheet once called
    uncertainty.Evaluator, which runs engine.compute) is caught however indirect."""
    g = {
        "ckptreport.render.sheet": {"ckptreport.model.helper"},
        "ckptreport.model.helper": {"ckptreport.answer.uncertainty.evaluator"},
        "ckptreport.answer.uncertainty.evaluator": {"ckptreport.model.evaluate"},
    }
    found = _renderers_reaching(g, {m for m in (*g, "ckptreport.model.evaluate") if computing(m)})
    assert found == [
        "ckptreport.render.sheet -> ckptreport.model.helper -> ckptreport.answer.uncertainty.evaluator",
        "ckptreport.render.sheet -> ckptreport.model.helper -> ckptreport.answer.uncertainty.evaluator -> "
        "ckptreport.model.evaluate",
    ]


def test_the_compute_stage_reaches_no_renderer():
    g = graph()
    for name in (m for m in g if 0 <= floor(m) < FLOORS.index("render")):
        via = _reached(g, name)
        assert not [m for m in via if floor(m) >= FLOORS.index("render")], name


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
    files = [
        *SRC.rglob("*.py"),
        *(REPO / "tests").rglob("*.py"),
        *(REPO / "benchmarks").glob("*.py"),
        *(REPO / "examples").glob("*.py"),
    ]
    for path in files:
        for line, module, name in _imported_names(path):
            home = _module_file(module)
            if (
                home is None
                or home.name == "__init__.py"
                or _module_file(f"{module}.{name}") is not None
            ):
                continue  # a package (its __init__ may re-export), or a submodule
            if name not in _defined(home):
                offenders.append(
                    f"{path.relative_to(REPO)}:{line}: {name} from {module}, which does not define it"
                )
    assert offenders == []


def test_the_one_address_check_finds_a_re_export(tmp_path):
    fake = tmp_path / "m.py"
    fake.write_text(
        "from ckptreport.model.evaluate import dimensions\n"
    )  # defined in plan.py, not evaluate.py
    found = [(m, n) for _, m, n in _imported_names(fake) if n not in _defined(_module_file(m))]
    assert found == [("ckptreport.model.evaluate", "dimensions")]


def _functions(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node.lineno, node.end_lineno - node.lineno + 1


def test_no_function_over_80_lines():
    long = [
        f"{p.relative_to(REPO)}:{line} {name} ({n} lines)"
        for p in SRC.rglob("*.py")
        for name, line, n in _functions(p)
        if n > 80
    ]
    assert long == []


def test_no_renderer_over_500_lines():
    """The rooms stay small enough to see whole: a new sheet or table is a new module beside them."""
    big = [
        f"{p.relative_to(REPO)} ({n} lines)"
        for p in (SRC / "render").rglob("*.py")
        if (n := len(p.read_text().splitlines())) > 500
    ]
    assert big == []


def _prose(path: Path) -> list[str]:
    """String literals of ``path`` that read as prose (eight words or more), but for docstrings and
    the messages of errors and progress."""
    tree = ast.parse(path.read_text())
    skip = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
            and ast.get_docstring(node) is not None
        ):
            skip.add(id(node.body[0].value))
        if isinstance(node, ast.Call):
            func = ast.unparse(node.func)
            if "Error" in func or "progress" in func:
                skip |= {id(n) for n in ast.walk(node)}
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and id(n) not in skip
        and len(n.value.split()) >= 8
    ]


def test_the_briefs_prose_lives_in_the_template():
    """render/brief.py formats figures; the sentences a director reads are in render/templates/brief.html.j2."""
    assert (
        _prose(SRC / "render" / "brief.py") == []
        and _prose(SRC / "render" / "brief_words.py") == []
    )
    assert (
        "Of the options that meet the"
        in (SRC / "render" / "templates" / "brief.html.j2").read_text()
    )


def test_the_rooms_hold_what_their_names_say():
    """The cross product is model/plan.py's, provenance read/provenance.py's; read/load.py reads and
    validates; the types every stage shares are in modules of their own (read/validated.py, answer/types.py)."""
    assert {
        "dimensions",
        "combinations",
        "cross_product",
        "plan_rows",
        "summary_point",
    } <= _defined(SRC / "model" / "plan.py")
    assert {"provenance", "basis"} <= _defined(SRC / "read" / "provenance.py")
    assert {"Inputs", "Prov"} <= _defined(SRC / "read" / "validated.py")
    assert {"Report", "Pick", "BriefData", "Param", "Page"} <= _defined(SRC / "answer" / "types.py")
    assert not {
        "dimensions",
        "combinations",
        "plan_rows",
        "provenance",
        "Prov",
        "Inputs",
    } & _defined(SRC / "read" / "load.py")
    assert "templates_dir" in _defined(SRC / "render" / "env.py")


def test_no_private_attribute_of_another_library():
    """`x._name` only on our own objects (self, cls) and never on a library's."""
    offenders = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}: .{node.attr}")
    assert offenders == []


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["validate"],
        [
            "explain",
            "llama3-405b",
            "dgx-h100",
            "superpod-good",
            "--gpus",
            "1024",
            "--interval",
            "30min",
        ],
        [
            "explain",
            "llama3-405b",
            "dgx-h100",
            "superpod-good",
            "--gpus",
            "1024",
            "--interval",
            "30min",
            "--json",
        ],
    ],
)
def test_quick_commands_import_only_what_they_use(argv):
    """--help, validate and explain start at once: no pandas, pint, pyarrow, openpyxl, matplotlib or
    WeasyPrint is imported (each costs a tenth of a second or more)."""
    heavy = ("pandas", "pint", "pyarrow", "openpyxl", "matplotlib", "weasyprint")
    code = (
        "import sys\nfrom ckptreport.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr
