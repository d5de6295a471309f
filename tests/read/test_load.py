"""Bad input, through the real CLI: each case breaks one thing in a copy of the shipped models and
checks that ckptreport exits 2, prints the exact `file:line:column: key.path: message` line(s), shows
no traceback, and writes nothing.

Expected lines and columns are found in the text the test wrote, not hard-coded. The tests run with
the working directory at tmp_path, so files print as ``models/<name>`` (the CLI shows paths relative
to the working directory).
"""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner, Result

from ckptreport.base.paths import shipped_models
from ckptreport.cli import main
from ckptreport.read import schema, yamlfile

from conftest import SMALL_PLAN

NOTHING_WRITTEN = "ckptreport: nothing was written."


@pytest.fixture
def models_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    d = tmp_path / "models"
    d.mkdir()
    files = sorted(shipped_models().glob("*.yaml"))
    assert {f.name for f in files} == set(schema.FILES)
    for f in files:
        shutil.copyfile(f, d / f.name)
    return d


@pytest.fixture
def out_dir(tmp_path: Path) -> Path:
    return tmp_path / "out"


def shown(name: str) -> str:
    """A file of the models copy as the CLI prints it (relative to the working directory)."""
    return f"models/{name}"


def replace(models_dir: Path, name: str, old: str, new: str) -> str:
    """Replace the first ``old`` in the file by ``new``; return the text written."""
    path = models_dir / name
    text = path.read_text()
    assert old in text, f"{old!r} not in {name}: the shipped models changed"
    text = text.replace(old, new, 1)
    path.write_text(text)
    return text


def one_line_gpus(models_dir: Path) -> None:
    """The shipped plan's gpus list, sourced item by item over several lines, as one line of the first
    three sizes (the edits below are made on it)."""
    path = models_dir / "plan.yaml"
    text, n = re.subn(
        r"^gpus:\n(?:  .*\n)+", "gpus: [1024, 4096, 16384]\n", path.read_text(), count=1, flags=re.M
    )
    assert n == 1, "the shipped plan's gpus list changed"
    path.write_text(text)


def replace_line(models_dir: Path, name: str, pattern: str, new: str) -> str:
    """Replace the first whole line matching ``pattern`` by ``new``; return the text written."""
    path = models_dir / name
    text = path.read_text()
    text, n = re.subn(pattern, new, text, count=1, flags=re.M)
    assert n == 1, f"{pattern!r} not in {name}: the shipped models changed"
    path.write_text(text)
    return text


def where(text: str, needle: str) -> tuple[int, int]:
    """1-based line and column of the only occurrence of ``needle`` in ``text``."""
    assert text.count(needle) == 1, f"{needle!r} occurs {text.count(needle)} times"
    i = text.index(needle)
    line = text.count("\n", 0, i) + 1
    return line, i - (text.rfind("\n", 0, i) + 1) + 1


def build(models_dir: Path, out_dir: Path) -> Result:
    return CliRunner().invoke(main, ["build", "--models", str(models_dir), "--out", str(out_dir)])


def problem_lines(result: Result) -> list[str]:
    """The output lines that are problems (not ckptreport's own progress/status lines)."""
    return [ln for ln in result.output.splitlines() if ln and not ln.startswith("ckptreport:")]


def _place(problem: str) -> tuple:
    """A problem line's file, line and column, in the order the loader reports them (by number)."""
    file, _, rest = problem.partition(":")
    line, _, rest = rest.partition(":")
    col = rest.partition(":")[0]
    return (file, int(line), int(col)) if line.isdigit() and col.isdigit() else (file, 0, 0)


def assert_rejected(result: Result, out_dir: Path | None, expected: list[str]) -> None:
    """Exit 2, exactly the ``expected`` problem lines, no traceback, nothing written."""
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert "internal error" not in result.output
    tail = [f"{len(expected)} problems found."] if len(expected) > 1 else []
    assert problem_lines(result) == sorted(expected, key=_place) + tail, result.output
    assert NOTHING_WRITTEN in result.output.splitlines()
    if out_dir is not None:
        assert not out_dir.exists() or not any(out_dir.iterdir())


def load_yaml(models_dir: Path, name: str):
    return yaml.safe_load((models_dir / name).read_text())


# ---- one broken thing each ---------------------------------------------------------------------


def test_yaml_syntax_error(models_dir, out_dir):
    """An unclosed '[' is a YAML syntax error reported at the place PyYAML finds it (the ':' of the
    next key, where a ',' or ']' was due), with PyYAML's own description."""
    one_line_gpus(models_dir)
    text = replace(models_dir, "plan.yaml", "gpus: [1024, 4096, 16384]", "gpus: [1024, 4096, 16384")
    line, _ = where(text, "gpus: [1024, 4096, 16384\n")
    next_line = text.splitlines()[line]  # the line after the edit (0-based index = line)
    col = next_line.index(":") + 1
    said = (
        "did not find expected ',' or ']'"
        if yamlfile._LOADER is not yaml.SafeLoader  # libyaml's words
        else "expected ',' or ']', but got ':'"
    )
    assert_rejected(
        build(models_dir, out_dir),
        out_dir,
        [f"{shown('plan.yaml')}:{line + 1}:{col}: YAML syntax error: {said}"],
    )


def test_unknown_key_suggests_the_close_one(models_dir, out_dir):
    """A misspelt key (per_node_wrte) is an unknown key, located at the key, with a 'did you mean'
    and the list of allowed keys."""
    text = replace(
        models_dir, "storage.yaml", "    per_node_write: 2 GB/s", "    per_node_wrte: 2 GB/s"
    )
    line, col = where(text, "per_node_wrte")
    allowed = ", ".join(schema.Tier.model_fields)
    assert_rejected(
        build(models_dir, out_dir),
        out_dir,
        [
            f"{shown('storage.yaml')}:{line}:{col}: tiers.superpod-good.per_node_wrte: unknown key "
            f"'per_node_wrte' (did you mean 'per_node_write'?); allowed keys: {allowed}"
        ],
    )


def test_misspelt_sku_in_the_plan(models_dir, out_dir):
    """A plan listing an SKU that does not exist names it, suggests the close one, lists the known
    ones, and points at the list item."""
    text = replace(
        models_dir,
        "plan.yaml",
        "strategies: [sync, async, tiered, peer_memory]\n",
        "strategies: [sync, async, tiered, peer_memory]\nskus: [dgx-h10]\n",
    )
    line, col = where(text, "skus: [dgx-h10]")
    col += len("skus: [")
    known = ", ".join(sorted(load_yaml(models_dir, "hardware.yaml")["skus"]))
    assert_rejected(
        build(models_dir, out_dir),
        out_dir,
        [
            f"{shown('plan.yaml')}:{line}:{col}: skus[0]: unknown sku 'dgx-h10' (did you mean "
            f"'dgx-h100'?); known: {known}"
        ],
    )


def test_misspelt_recipe_of_a_model(models_dir, out_dir):
    """A model whose recipe does not exist (adamw-bf61) is reported at its recipe key with a 'did
    you mean'."""
    data = load_yaml(models_dir, "models.yaml")
    first = next(iter(data["models"]))
    assert data["models"][first]["recipe"] == "adamw-bf16"
    text = replace(
        models_dir, "models.yaml", "    recipe: adamw-bf16\n", "    recipe: adamw-bf61\n"
    )
    line, col = where(text, "recipe: adamw-bf61")
    known = ", ".join(sorted(data["recipes"]))
    assert_rejected(
        build(models_dir, out_dir),
        out_dir,
        [
            f"{shown('models.yaml')}:{line}:{col}: models.{first}.recipe: unknown recipe 'adamw-bf61' "
            f"(did you mean 'adamw-bf16'?); known: {known}"
        ],
    )


@pytest.mark.parametrize("value", ["100 GB", "{value: 100 GB, basis: spec, source: x}"])
def test_size_where_a_bandwidth_is_due(models_dir, out_dir, value):
    """A size given for a bandwidth (storage_nic: 100 GB, plain or as a sourced mapping) says what
    was expected, what was found, and what kind of quantity that is."""
    sku = next(iter(load_yaml(models_dir, "hardware.yaml")["skus"]))
    text = replace_line(
        models_dir, "hardware.yaml", r"^    storage_nic: .*$", f"    storage_nic: {value}"
    )
    line, col = where(text, f"storage_nic: {value}")
    assert_rejected(
        build(models_dir, out_dir),
        out_dir,
        [
            f"{shown('hardware.yaml')}:{line}:{col}: skus.{sku}.storage_nic: expected a bandwidth like "
            f"'100 GB/s' or '400 Gb/s' or '2 x 400 Gb/s', got '100 GB' (that is a size)"
        ],
    )


@pytest.mark.parametrize("value", ["-30 GB/s", "0 GB/s"])
def test_bandwidth_must_be_positive(models_dir, out_dir, value):
    """A negative or zero bandwidth (a tier's write) is refused: 'greater than 0', with the text."""
    text = replace(models_dir, "storage.yaml", "    write: 30 GB/s\n", f"    write: {value}\n")
    line, col = where(text, f"    write: {value}")
    col += 4  # the key, past its indentation
    assert_rejected(
        build(models_dir, out_dir),
        out_dir,
        [
            f"{shown('storage.yaml')}:{line}:{col}: tiers.superpod-good.write: expected a bandwidth "
            f"greater than 0, got '{value}'"
        ],
    )


def test_inputs_forgive_what_is_unambiguous(models_dir):
    """A bare number for a key that says usd in its name is dollars (usd_per_gpu_hour: 4.92 is $4.92);
    a plan without buffers stages one copy. Both used to be refused. A bare number where the unit is
    not in the name (a bandwidth, a percentage) is still refused, with file, line and key."""
    from ckptreport.read.load import load

    replace_line(
        models_dir, "hardware.yaml", r"^    usd_per_gpu_hour: .*$", "    usd_per_gpu_hour: 4.92"
    )
    replace_line(models_dir, "plan.yaml", r"^buffers: .*$", "")
    result = CliRunner().invoke(main, ["validate", "--models", str(models_dir)])
    assert result.exit_code == 0, result.output
    inputs = load(models_dir)
    first = next(iter(inputs.skus))
    assert inputs.skus[first].usd_per_gpu_hour.value == 4.92 and inputs.plan.buffers is None
    from ckptreport.model.evaluate import entity_values

    assert entity_values(inputs, "plan", "plan")["buffers"] == 1.0
    text = replace_line(models_dir, "plan.yaml", r"^target_overhead: .*$", "target_overhead: 1")
    line, col = where(text, "target_overhead: 1\n")
    refused = CliRunner().invoke(main, ["validate", "--models", str(models_dir)])
    assert refused.exit_code == 2
    assert (
        f"{shown('plan.yaml')}:{line}:{col}: target_overhead: expected a percentage like '40%'"
        in refused.output
    )


def test_the_new_keys_of_issue_14_are_checked_as_their_units(models_dir, out_dir):
    """bytes_per_param '16 B' would read as 16 billion: refused; a size for staging, a percentage over
    100% for the recovery mix, a negative writer scaling, an unknown dtype: each named where it is."""
    replace(
        models_dir,
        "models.yaml",
        "    recipe: adamw-bf16\n",
        "    recipe: adamw-bf16\n    bytes_per_param: 16 B\n",
    )
    replace_line(models_dir, "plan.yaml", r"^host_recoverable: .*$", "host_recoverable: 150%")
    replace_line(models_dir, "engines.yaml", r"^    writer_scaling: .*$", "    writer_scaling: -5%")
    replace_line(
        models_dir, "engines.yaml", r"^    staging_per_gpu: .*$", "    staging_per_gpu: 5 GB"
    )
    replace(
        models_dir, "models.yaml", "    grads: bf16\n", "    grads: bf16\n    consolidated: fp33\n"
    )
    result = build(models_dir, out_dir)
    assert result.exit_code == 2 and "Traceback" not in result.output
    said = " ".join(problem_lines(result))
    assert "bytes_per_param: expected a count of at most 100, got '16 B'" in said
    assert "host_recoverable: expected a percentage of at most 100%, got '150%'" in said
    assert "writer_scaling: expected a percentage at least 0, got '-5%'" in said
    assert (
        "staging_per_gpu: expected a bandwidth like" in said
        and "got '5 GB' (that is a size)" in said
    )
    assert "consolidated: expected a dtype" in said and "5 problems found." in said
    assert not out_dir.exists() or not any(out_dir.iterdir())


@pytest.mark.parametrize("content", ["", "# nothing but a comment\n"])
def test_empty_file(models_dir, out_dir, content):
    """An empty plan.yaml (or one holding only comments) is 'file is empty' at 1:1, and nothing
    else is reported about it."""
    (models_dir / "plan.yaml").write_text(content)
    assert_rejected(
        build(models_dir, out_dir), out_dir, [f"{shown('plan.yaml')}:1:1: file is empty"]
    )


def test_missing_file(models_dir, out_dir):
    """A missing storage.yaml is reported by name (no line: there is no file) with how to get one."""
    (models_dir / "storage.yaml").unlink()
    assert_rejected(
        build(models_dir, out_dir),
        out_dir,
        [
            f"{shown('storage.yaml')}: file is missing (ckptreport init DIR writes a complete starting set)"
        ],
    )


def test_cross_product_larger_than_max_rows(models_dir, out_dir, tmp_path):
    """A plan with more rows than max_rows names the rows it would build (the combinations that can
    exist, counted here from a build of the same plan), each axis and their product, says to narrow
    it and names max_rows, located at the max_rows line that set the limit."""
    bare = CliRunner().invoke(
        main,
        [
            "build",
            "--models",
            str(models_dir),
            "--out",
            str(tmp_path / "bare"),
            "--no-workbook",
            "--no-briefs",
            "-q",
        ],
    )
    assert bare.exit_code == 0, bare.output
    kept = len(pd.read_parquet(tmp_path / "bare" / "scenarios.parquet", columns=["model"]))
    text = replace(
        models_dir,
        "plan.yaml",
        "strategies: [sync, async, tiered, peer_memory]\n",
        "strategies: [sync, async, tiered, peer_memory]\nmax_rows: 100\n",
    )
    line, col = where(text, "max_rows: 100")
    plan = load_yaml(models_dir, "plan.yaml")
    axes = {
        "model": len(load_yaml(models_dir, "models.yaml")["models"]),
        "recipe": len(plan["recipes"]),
        "sku": len(load_yaml(models_dir, "hardware.yaml")["skus"]),
        "tier": len(load_yaml(models_dir, "storage.yaml")["tiers"]),
        "engine": len(plan["engines"]),
        "strategy": len(plan["strategies"]),
        "gpus": len(plan["gpus"]),
        "interval_s": len(plan["intervals"]),
    }
    product = math.prod(axes.values())
    assert 100 < kept < product  # the shipped tiers do not all serve every SKU's site
    parts = " x ".join(f"{n} {k}" for k, n in axes.items())
    result = build(models_dir, out_dir)
    assert result.exit_code == 2, result.output
    assert_rejected(
        result,
        out_dir,
        [
            f"{shown('plan.yaml')}:{line}:{col}: max_rows: the plan has {kept:,} rows ({parts} = {product:,}, "
            f"less {product - kept:,} that cannot exist), more than max_rows (100); narrow it by listing fewer "
            "models, skus, tiers, engines, gpus, intervals or strategies in the plan, or raise max_rows"
        ],
    )


def test_duplicate_key(models_dir, out_dir):
    """A key given twice in one mapping is refused at the second, naming the line of the first
    (YAML would otherwise silently keep the last)."""
    text = replace(
        models_dir,
        "storage.yaml",
        "    write: 30 GB/s\n",
        "    write: 30 GB/s\n    write: 31 GB/s\n",
    )
    first, _ = where(text, "    write: 30 GB/s")
    line, col = where(text, "write: 31 GB/s")
    assert_rejected(
        build(models_dir, out_dir),
        out_dir,
        [
            f"{shown('storage.yaml')}:{line}:{col}: tiers.superpod-good.write: duplicate key "
            f"(first defined on line {first})"
        ],
    )


# ---- several at once -----------------------------------------------------------------------------


def break_three(models_dir: Path) -> list[str]:
    """Break one thing in each of three files; return the three problem lines expected."""
    sku = next(iter(load_yaml(models_dir, "hardware.yaml")["skus"]))
    known = ", ".join(sorted(load_yaml(models_dir, "hardware.yaml")["skus"]))
    storage = replace(
        models_dir, "storage.yaml", "    per_node_write: 2 GB/s", "    per_node_wrte: 2 GB/s"
    )
    hardware = replace_line(
        models_dir, "hardware.yaml", r"^    storage_nic: .*$", "    storage_nic: 100 GB"
    )
    plan = replace(
        models_dir,
        "plan.yaml",
        "strategies: [sync, async, tiered, peer_memory]\n",
        "strategies: [sync, async, tiered, peer_memory]\nskus: [dgx-h10]\n",
    )
    s_line, s_col = where(storage, "per_node_wrte")
    h_line, h_col = where(hardware, "storage_nic: 100 GB")
    p_line, p_col = where(plan, "skus: [dgx-h10]")
    p_col += len("skus: [")
    return [
        f"{shown('storage.yaml')}:{s_line}:{s_col}: tiers.superpod-good.per_node_wrte: unknown key "
        f"'per_node_wrte' (did you mean 'per_node_write'?); allowed keys: {', '.join(schema.Tier.model_fields)}",
        f"{shown('hardware.yaml')}:{h_line}:{h_col}: skus.{sku}.storage_nic: expected a bandwidth like "
        f"'100 GB/s' or '400 Gb/s' or '2 x 400 Gb/s', got '100 GB' (that is a size)",
        f"{shown('plan.yaml')}:{p_line}:{p_col}: skus[0]: unknown sku 'dgx-h10' (did you mean "
        f"'dgx-h100'?); known: {known}",
    ]


def test_several_errors_are_all_reported(models_dir, out_dir):
    """Three problems in three files are all reported in one run, sorted by file, with a count:
    the user fixes them in one pass rather than one per run."""
    expected = break_three(models_dir)
    result = build(models_dir, out_dir)
    assert_rejected(result, out_dir, expected)
    assert "3 problems found." in result.output.splitlines()


# ---- YAML's implicit typing is not trusted -----------------------------------------------------


def test_exponent_count_is_a_count(models_dir, out_dir):
    """gpus_per_node: 1e1 (a float to YAML) is read by the count parser as 10: the build succeeds
    and every scenario of that SKU has 10 GPUs per node."""
    sku = next(iter(load_yaml(models_dir, "hardware.yaml")["skus"]))
    replace(models_dir, "hardware.yaml", "    gpus_per_node: 8\n", "    gpus_per_node: 1e1\n")
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--models",
            str(models_dir),
            "--out",
            str(out_dir),
            "--no-workbook",
            "--no-briefs",
        ],
    )
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out_dir / "scenarios.csv")
    rows = frame[frame["sku"] == sku]
    assert len(rows) and (rows["gpus_per_node"] == 10).all()
    assert (rows["nodes"] == (rows["gpus"] / 10).apply(math.ceil)).all()


def test_no_is_not_a_bool(models_dir, out_dir):
    """A recipe's `weights: no` (a bool to YAML 1.1) reaches the dtype parser as the text 'no' and
    is refused as a dtype, quoting 'no' (not False)."""
    recipe = next(iter(load_yaml(models_dir, "models.yaml")["recipes"]))
    text = replace(models_dir, "models.yaml", "    weights: bf16\n", "    weights: no\n")
    line, col = where(text, "weights: no")
    result = build(models_dir, out_dir)
    assert_rejected(
        result,
        out_dir,
        [
            f"{shown('models.yaml')}:{line}:{col}: recipes.{recipe}.weights: expected a dtype (one of "
            "bf16, fp16, fp32, fp8, int8), got 'no'"
        ],
    )
    assert not any("False" in ln or "bool" in ln for ln in problem_lines(result))


def test_a_brief_with_no_possible_combination(models_dir, out_dir):
    """A `briefs:` entry whose every combination is impossible (a local_nvme tier on a SKU without
    local NVMe) is named with its place, before anything is written."""
    text = (models_dir / "plan.yaml").read_text() + (
        "briefs:\n  - name: impossible\n    model: llama3-8b\n    skus: [gh200]\n    tiers: [local-nvme]\n"
        "    gpus: 64\n    interval: 30 min\n"
    )
    (models_dir / "plan.yaml").write_text(text)
    line, col = where(text, "name: impossible")
    assert_rejected(
        build(models_dir, out_dir),
        out_dir,
        [
            f"{shown('plan.yaml')}:{line}:{col}: briefs[0].name: every combination of brief 'impossible' is impossible "
            "(tiered or a local_nvme tier on a SKU without local NVMe): name a remote tier or a SKU with local NVMe"
        ],
    )


# ---- a failed build leaves the previous outputs alone --------------------------------------------


def test_failed_build_leaves_previous_out_untouched(models_dir, out_dir):
    """A good build writes out/; a later build from broken input exits 2 and leaves every file of
    out/ byte-for-byte as it was, with nothing added (no staging directory left behind)."""
    (models_dir / "plan.yaml").write_text(SMALL_PLAN)  # every kind of output, quickly
    first = CliRunner().invoke(
        main, ["build", "--models", str(models_dir), "--out", str(out_dir), "--workbook-rows", "50"]
    )
    assert first.exit_code == 0, first.output
    before = {
        str(p.relative_to(out_dir)): p.read_bytes() for p in out_dir.rglob("*") if p.is_file()
    }
    assert "briefs/llama3-405b.pdf" in before and "ckptreport.xlsx" in before
    assert "scenarios.csv" in before and before["scenarios.csv"]
    sku = next(iter(load_yaml(models_dir, "hardware.yaml")["skus"]))
    text = replace_line(
        models_dir, "hardware.yaml", r"^    storage_nic: .*$", "    storage_nic: 100 GB"
    )
    line, col = where(text, "storage_nic: 100 GB")
    second = build(models_dir, out_dir)
    assert_rejected(
        second,
        None,
        [
            f"{shown('hardware.yaml')}:{line}:{col}: skus.{sku}.storage_nic: expected a bandwidth like "
            f"'100 GB/s' or '400 Gb/s' or '2 x 400 Gb/s', got '100 GB' (that is a size)"
        ],
    )
    assert {
        str(p.relative_to(out_dir)): p.read_bytes() for p in out_dir.rglob("*") if p.is_file()
    } == before


# ---- the other commands --------------------------------------------------------------------------


def test_validate_good_and_broken(models_dir, out_dir):
    """`ckptreport validate` exits 0 on the good copy, and on a broken copy exits 2 listing exactly
    the problems build lists."""
    good = CliRunner().invoke(main, ["validate", "--models", str(models_dir)])
    assert good.exit_code == 0, good.output
    assert "valid" in good.output and "Traceback" not in good.output
    expected = break_three(models_dir)
    bad = CliRunner().invoke(main, ["validate", "--models", str(models_dir)])
    assert_rejected(bad, None, expected)
    built = build(models_dir, out_dir)
    assert problem_lines(bad) == problem_lines(built)


def test_explain_misspelt_model(models_dir):
    """`ckptreport explain` with a misspelt model name exits 2 with a 'did you mean' and the known
    models, without a traceback."""
    known = ", ".join(sorted(load_yaml(models_dir, "models.yaml")["models"]))
    result = CliRunner().invoke(
        main,
        [
            "explain",
            "llama3-40b",
            "dgx-h100",
            "pfs-100",
            "--gpus",
            "1024",
            "--interval",
            "30min",
            "--models",
            str(models_dir),
        ],
    )
    assert_rejected(
        result, None, [f"unknown model 'llama3-40b' (did you mean 'llama3-405b'?); known: {known}"]
    )


@pytest.mark.parametrize(
    "old, new, key",
    [
        ("gpus_per_node: 8\n", "gpus_per_node: 1e400\n", "gpus_per_node"),
        ("params: 405.85B", "params: 1e400", "params"),
    ],
)
def test_a_number_too_large_for_a_float_is_a_user_error(models_dir, out_dir, old, new, key):
    """1e400 overflows a float: a clear error at its key, exit 2, not an internal error."""
    name = "hardware.yaml" if key == "gpus_per_node" else "models.yaml"
    replace(models_dir, name, old, new)
    result = build(models_dir, out_dir)
    assert result.exit_code == 2 and "internal error" not in result.output
    assert f".{key}: expected a count like" in result.output and "(too large)" in result.output


def test_a_percentage_over_100_is_placed_at_its_key(models_dir, out_dir):
    """mfu: 140% is reported at the mfu line with its key path."""
    text = replace_line(models_dir, "plan.yaml", r"^mfu: .*$", "mfu: 140%")
    line, col = where(text, "mfu: 140%")
    assert_rejected(
        build(models_dir, out_dir),
        out_dir,
        [
            f"{shown('plan.yaml')}:{line}:{col}: mfu: expected a percentage of at most 100%, got '140%'"
        ],
    )


def test_a_plan_with_no_possible_combination_is_a_user_error(models_dir, out_dir):
    """Only the tiered strategy on a SKU without local NVMe leaves nothing to compute: say why, exit 2."""
    replace_line(
        models_dir, "plan.yaml", r"^strategies: .*$", "strategies: [tiered]\nskus: [gh200]"
    )
    replace_line(models_dir, "plan.yaml", r"^  sku: .*$", "  sku: gh200")
    result = build(models_dir, out_dir)
    assert result.exit_code == 2 and "internal error" not in result.output
    assert (
        "every combination of the plan was left out" in result.output
        and "no local NVMe" in result.output
    )
    assert not out_dir.exists() or not any(out_dir.iterdir())


def test_a_missing_key_says_what_it_means(models_copy):
    """A new user who leaves a key out learns what it is from the message, not only its name."""
    plan = models_copy / "plan.yaml"
    plan.write_text(
        "\n".join(line for line in plan.read_text().splitlines() if not line.startswith("mfu:"))
    )
    hardware = models_copy / "hardware.yaml"
    hardware.write_text(hardware.read_text().replace("    gpu_mtbf:", "    gpu_mtbf_typo:", 1))
    from ckptreport.base.errors import InputError
    from ckptreport.read.load import load

    with pytest.raises(InputError) as caught:
        load(models_copy)
    messages = {p.path: p.message for p in caught.value.problems}
    assert (
        messages["mfu"]
        == "missing required key 'mfu' (model FLOPs utilisation, e.g. 40%; plausible: 1% to 100%)"
    )
    missing = next(m for k, m in messages.items() if k.endswith(".gpu_mtbf"))
    assert missing == (
        "missing required key 'gpu_mtbf' (mean time between job-stopping failures, per GPU; "
        "plausible: 100 h to 10000 y)"
    )


# ---- engines (issue 24) --------------------------------------------------------------------------


def test_an_unknown_engine_in_the_plan_is_named_with_the_close_one(models_dir, out_dir):
    text = replace(
        models_dir, "plan.yaml", "engines: [dcp-async-cached,", "engines: [dcp-async-cachd,"
    )
    line, col = where(text, "dcp-async-cachd")
    known = ", ".join(sorted(load_yaml(models_dir, "engines.yaml")["engines"]))
    assert_rejected(
        build(models_dir, out_dir),
        out_dir,
        [
            f"{shown('plan.yaml')}:{line}:{col}: engines[0]: unknown engine 'dcp-async-cachd' (did you mean "
            f"'dcp-async-cached'?); known: {known}"
        ],
    )


def test_a_negative_engine_term_and_an_unknown_strategy(models_dir, out_dir):
    """A coordination constant below zero and a strategy no engine implements, each at its place."""
    text = replace(
        models_dir,
        "engines.yaml",
        "constant: {value: 1.5 s, low: 0.5 s, high: 5 s, basis: measured",
        "constant: {value: -4 s, low: 0 s, high: 5 s, basis: measured",
    )
    line, col = where(text, "constant: {value: -4 s")
    text = replace(
        models_dir,
        "engines.yaml",
        "    strategies: [sync]\n    staging: pinned\n    replicated: balanced",
        "    strategies: [sync, flush]\n    staging: pinned\n    replicated: balanced",
    )
    s_line, s_col = where(text, "[sync, flush]")
    s_col += len("[sync, ")
    assert_rejected(
        build(models_dir, out_dir),
        out_dir,
        [
            f"{shown('engines.yaml')}:{line}:{col}: engines.dcp-async-cached.coordination.constant: "
            "expected a duration at least 0, got '-4 s'",
            f"{shown('engines.yaml')}:{s_line}:{s_col}: engines.megatron-dist-ckpt.strategies[1]: expected 'sync', "
            "'async', 'tiered', 'peer_memory', 'differential', 'replica_recovery' or 'jit', got 'flush'",
        ],
    )


def test_contradictory_engine_terms_are_all_named_at_their_keys(models_dir, out_dir):
    """A sync-only engine with a staging rate in pinned memory, a slowdown of a background write it never
    runs, and a cached plan dearer than planning anew: three problems, each at its key, in one run."""
    text = replace(
        models_dir,
        "engines.yaml",
        "    strategies: [sync]\n    staging: pinned\n    replicated: balanced",
        "    strategies: [sync]\n    staging: pinned\n    staging_per_gpu: 4 GB/s\n    async_slowdown: 10%\n"
        "    replicated: balanced",
    )
    text = replace(
        models_dir,
        "engines.yaml",
        "constant: {value: 1.5 s, low: 0.5 s, high: 10 s, basis: assumption",
        "constant: {value: 150 s, low: 0.5 s, high: 200 s, basis: assumption",
    )
    name = "engines.megatron-dist-ckpt"
    (a, b), (c, d) = where(text, "staging_per_gpu: 4 GB/s"), where(text, "async_slowdown: 10%")
    e, f = where(text, "constant: {value: 150 s")
    assert_rejected(
        build(models_dir, out_dir),
        out_dir,
        [
            f"{shown('engines.yaml')}:{a}:{b}: {name}.staging_per_gpu: pinned staging copies at the SKU's d2h_per_gpu: "
            "give staging_per_gpu with staging: pageable or shared_memory",
            f"{shown('engines.yaml')}:{c}:{d}: {name}.async_slowdown: "
            "async_slowdown applies to async and tiered saves, "
            "and this engine's strategies are sync only",
            f"{shown('engines.yaml')}:{e}:{f}: {name}.cached_coordination.constant: cached_coordination.constant "
            "(150 s) exceeds coordination.constant (1.5 s): a cached plan never costs more than planning anew",
        ],
    )


def test_an_engine_missing_a_term_it_needs(models_dir, out_dir):
    """Plan caching without what a cached save costs; an engine without the strategies it implements."""
    text = replace(
        models_dir,
        "engines.yaml",
        "    cached_coordination:\n      constant: {value: 1.5 s, low: 0.5 s, high: 5 s",
        "    cached_coordination:\n      per_rank: 0 s\n      #: {value: 1.5 s, low: 0.5 s, high: 5 s",
    )
    line, col = where(text, "    cached_coordination:\n      per_rank: 0 s")
    col += 4
    text = replace(
        models_dir,
        "engines.yaml",
        "    strategies: [sync]\n    staging: pinned\n    files_per_rank",
        "    staging: pinned\n    files_per_rank",
    )
    m_line, m_col = where(text, "  torch-save:\n")
    m_col += 2
    assert_rejected(
        build(models_dir, out_dir),
        out_dir,
        [
            f"{shown('engines.yaml')}:{line}:{col}: engines.dcp-async-cached.cached_coordination: cached_coordination "
            "needs its constant (what a later save costs whatever the job's size)",
            f"{shown('engines.yaml')}:{m_line}:{m_col}: engines.torch-save.strategies: "
            "missing required key 'strategies' "
            "(the strategies the engine implements (sync, async, tiered); the plan crosses it with these only)",
        ],
    )


@pytest.mark.parametrize(
    "key, moved",
    [
        ("writer_bandwidth: 2 GB/s", "engines.NAME.writer_bandwidth"),
        ("coordination_per_rank: 0.01 s", "engines.NAME.coordination.per_rank"),
    ],
)
def test_a_plan_key_that_moved_to_the_engines_says_where(models_dir, out_dir, key, moved):
    text = replace(
        models_dir,
        "plan.yaml",
        "strategies: [sync, async, tiered, peer_memory]\n",
        f"strategies: [sync, async, tiered, peer_memory]\n{key}\n",
    )
    line, col = where(text, key)
    name = key.split(":")[0]
    assert_rejected(
        build(models_dir, out_dir),
        out_dir,
        [
            f"{shown('plan.yaml')}:{line}:{col}: {name}: '{name}' is an engine's term now: it moved to engines.yaml, "
            f"as {moved}"
        ],
    )


# ---- issue 25: layouts that do not divide -------------------------------------------------------


def test_a_cluster_smaller_than_one_replica_is_refused_at_the_size(models_dir, out_dir):
    """64 GPUs cannot hold one replica of Llama 3 405B (tp 8 x pp 16 = 128 GPUs): refused at the list
    item; 1,024 is fine (8 whole replicas), and sizes one replica does not divide run on whole ones."""
    one_line_gpus(models_dir)
    text = replace(models_dir, "plan.yaml", "gpus: [1024, 4096, 16384]", "gpus: [64, 1024]")
    line, col = where(text, "gpus: [64, 1024]")
    col += len("gpus: [")
    assert_rejected(
        build(models_dir, out_dir),
        out_dir,
        [
            f"{shown('plan.yaml')}:{line}:{col}: gpus[0]: 64 GPUs hold less than one replica of llama3-405b "
            "(tp 8 x pp 16 = 128 GPUs)"
        ],
    )
    result = CliRunner().invoke(
        main,
        ["explain", "llama3-405b", "dgx-h100", "pfs-100", "--gpus", "64", "--interval", "30min"],
    )
    assert result.exit_code == 2 and "hold less than one replica" in result.output
    assert "Traceback" not in result.output


def test_implausible_figures_are_typos_not_plans(models_dir, out_dir):
    """mfu 1e-300% built with exit 0 and wrote infinite run days and costs; a GPU-hour of $4,916 (a
    slipped decimal point) priced every run a thousand times over. Both are refused at their place,
    naming the plausible range."""
    text = replace_line(models_dir, "plan.yaml", r"^mfu: .*$", "mfu: 1e-300%")
    line, col = where(text, "mfu: 1e-300%")
    hw = replace(
        models_dir,
        "hardware.yaml",
        "usd_per_gpu_hour: {value: $4.916",
        "usd_per_gpu_hour: {value: $4916",
    )
    sku = load_yaml(models_dir, "hardware.yaml")["skus"]
    first = next(n for n, s in sku.items() if str(s["usd_per_gpu_hour"]["value"]) == "$4916")
    lines = [
        i + 1 for i, ln in enumerate(hw.splitlines()) if "usd_per_gpu_hour: {value: $4916" in ln
    ]
    assert len(lines) >= 1
    said = problem_lines(build(models_dir, out_dir))
    assert (
        f"{shown('plan.yaml')}:{line}:{col}: mfu: expected a percentage from 1% to 100%, got '1e-300%'"
        in said
    )
    assert any(
        s.startswith(
            f"{shown('hardware.yaml')}:{lines[0]}:5: skus.{first}.usd_per_gpu_hour: expected a "
            "dollar amount from $0.01 to $1,000, got '$4916'"
        )
        for s in said
    ), said
    assert not out_dir.exists() or not any(out_dir.iterdir())


def test_a_source_with_an_escape_sequence_is_refused_where_it_is(models_dir, out_dir):
    """An ANSI escape and a bell inside a quantity's source crashed the workbook writer (an lxml error,
    exit 3); free text anywhere in a models file is printable, as names are."""
    text = replace(
        models_dir,
        "hardware.yaml",
        'd2h_per_gpu: {value: 55 GB/s, basis: measured, source: "',
        'd2h_per_gpu: {value: 55 GB/s, basis: measured, source: "\\e[31mred\\a ',
    )
    line, col = where(text, 'd2h_per_gpu: {value: 55 GB/s, basis: measured, source: "\\e[31m')
    sku = next(
        n
        for n, s in load_yaml(models_dir, "hardware.yaml")["skus"].items()
        if isinstance(s.get("d2h_per_gpu"), dict) and "\x1b" in s["d2h_per_gpu"].get("source", "")
    )
    said = problem_lines(build(models_dir, out_dir))
    assert len(said) == 1 and said[0].startswith(
        f"{shown('hardware.yaml')}:{line}:{col}: skus.{sku}.d2h_per_gpu: source is printable text, without control "
        "characters or escape sequences, got '\\x1b[31mred\\x07 "
    ), said
    assert not out_dir.exists() or not any(out_dir.iterdir())


def test_an_architecture_larger_than_its_parameters_is_a_typo(models_dir, out_dir):
    """params 4.0585B for Llama 3 405B (a slipped digit) with its vocabulary 128,256 and width 16,384:
    the embedding and output layers alone are 4.2B parameters, and the stages came out negative."""
    text = replace(models_dir, "models.yaml", "    params: 405.85B\n", "    params: 4.0585B\n")
    line, col = where(text, '    vocab: {value: "128256"')
    col += 4
    assert_rejected(
        build(models_dir, out_dir),
        out_dir,
        [
            f"{shown('models.yaml')}:{line}:{col}: models.llama3-405b.vocab: 2 x vocab x hidden (the embedding and "
            "output layers, 4,202,692,608 parameters) is not below params (4.0585B): one of them is a typo"
        ],
    )


def test_the_layered_strategies_inputs_are_checked_where_they_are_written(models_dir, out_dir):
    """N or K below 1 or not whole, a difference larger than the checkpoint: each at its key, exit 2,
    nothing written."""
    text = replace_line(models_dir, "plan.yaml", r"^durable_every: .*$", "durable_every: 0")
    text = replace_line(models_dir, "plan.yaml", r"^full_every: .*$", "full_every: 0.5")
    text = replace_line(models_dir, "plan.yaml", r"^diff_fraction: .*$", "diff_fraction: 120%")
    result = build(models_dir, out_dir)
    at = {
        key: where(text, f"\n{key}: ")[0] + 1
        for key in ("durable_every", "full_every", "diff_fraction")
    }
    assert_rejected(
        result,
        out_dir,
        [
            f"models/plan.yaml:{at['durable_every']}:1: durable_every: expected a count greater than 0, got '0'",
            f"models/plan.yaml:{at['full_every']}:1: full_every: expected a count from 1 to 10000, got '0.5'",
            f"models/plan.yaml:{at['diff_fraction']}:1: diff_fraction: "
            "expected a percentage of at most 100%, got '120%'",
        ],
    )


def test_more_peers_than_nodes_and_failure_shares_over_100_are_refused(models_dir, out_dir):
    """peer_memory with as many peers as a job of the plan has nodes, and failure shares that add up to
    more than every failure: each at its key, exit 2, nothing written."""
    text = replace_line(
        models_dir, "plan.yaml", r"^strategies: .*$", "strategies: [sync, async, peer_memory]"
    )
    one_line_gpus(models_dir)
    text = replace_line(
        models_dir,
        "plan.yaml",
        r"^gpus: .*$",
        "gpus: [16, 1024]\nmodels: [llama3-8b]\nskus: [dgx-h100]",
    )
    text = replace_line(models_dir, "plan.yaml", r"^peer_replicas: .*$", "peer_replicas: 2")
    text = replace_line(models_dir, "plan.yaml", r"^node_loss: .*$", "node_loss: 30%")
    text = replace_line(models_dir, "plan.yaml", r"^  model: .*$", "  model: llama3-8b")
    result = build(models_dir, out_dir)
    at = {key: where(text, f"\n{key}: ")[0] + 1 for key in ("peer_replicas", "node_loss")}
    assert_rejected(
        result,
        out_dir,
        [
            f"models/plan.yaml:{at['peer_replicas']}:1: peer_replicas: 2 peer(s) per node need at least 3 nodes, but "
            "the plan's 16 GPUs on dgx-h100 are 2 node(s): lower peer_replicas, or leave peer_memory out of strategies",
            f"models/plan.yaml:{at['node_loss']}:1: node_loss: "
            "node_loss 0.3 and host_recoverable 0.75 (as fractions) add "
            "up to more than every failure: the two shares and the rest (the durable tier's) must add up to 100%",
        ],
    )


def test_a_pipeline_longer_than_the_model_and_an_empty_axis_are_refused(models_dir, out_dir):
    """pp 127 over 126 layers: every stage needs a layer; engines: [] is not 'every engine'."""
    text = replace(
        models_dir,
        "models.yaml",
        'pp: {value: "16", source: "Llama 3 paper Table 4',
        'pp: {value: "127", source: "Llama 3 paper Table 4',
    )
    line, _ = where(text, 'pp: {value: "127"')
    col = 5  # the key, as the loader places a model's figure
    plan = replace(
        models_dir,
        "plan.yaml",
        "engines: [dcp-async-cached, megatron-dist-ckpt, torch-save, nvrx-local]",
        "engines: []",
    )
    e_line, e_col = where(plan, "engines: []")
    assert_rejected(
        build(models_dir, out_dir),
        out_dir,
        [
            f"{shown('models.yaml')}:{line}:{col}: models.llama3-405b.pp: a pipeline of 127 stages "
            "over 126 layers: every stage needs at least one layer (pp at most 126)",
            f"{shown('plan.yaml')}:{e_line}:{e_col}: engines: an empty list names none; omit engines "
            "for every one",
        ],
    )


def test_a_layered_strategy_without_an_input_only_it_reads_is_refused(models_dir, out_dir):
    """strategies: [jit] with no batch_tokens: jit's rework (and so its cost) is unknown, refused at
    the strategy, not built into a table of blanks and a 'needs a price' for a priced tier."""
    plan = replace(
        models_dir,
        "plan.yaml",
        "strategies: [sync, async, tiered, peer_memory]",
        "strategies: [sync, jit]",
    )
    plan = replace(models_dir, "plan.yaml", plan[plan.index("batch_tokens:") :].split("\n")[0], "")
    line, col = where(plan, "strategies: [sync, jit]")
    assert_rejected(
        build(models_dir, out_dir),
        out_dir,
        [
            f"{shown('plan.yaml')}:{line}:{col + len('strategies: [sync, ')}: strategies[1]: jit needs "
            "batch_tokens in plan.yaml (tokens in one training step (the global batch): jit redoes about "
            "one step after a failure); give it, or leave jit out of strategies"
        ],
    )


def test_the_inputs_pickle_for_a_worker_to_receive(shipped):
    """A Dask worker (or any process pool) receives the validated inputs by pickling them: every
    entity, its grouped keys (a SKU's local_nvme) included, comes back equal."""
    import pickle

    from ckptreport.model.plan import plan_rows

    back = pickle.loads(pickle.dumps(shipped))
    assert back.skus["dgx-h100"].local_nvme == shipped.skus["dgx-h100"].local_nvme is not None
    for kind in ("models", "recipes", "skus", "tiers", "engines"):
        assert getattr(back, kind).keys() == getattr(shipped, kind).keys()
        for name, entity in getattr(shipped, kind).items():
            assert getattr(back, kind)[name].model_dump() == entity.model_dump(), (kind, name)
    assert plan_rows(back)[0] == plan_rows(shipped)[0] > 0
