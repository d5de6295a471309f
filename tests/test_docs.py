"""The README cannot drift from the code: its tables are generated, its commands run, its example
error output is what the tool prints."""

from __future__ import annotations

import re
import shlex

from click.testing import CliRunner

from ckptreport import docs
from ckptreport.cli import main

from conftest import REPO

README = (REPO / "README.md").read_text()


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, re.S)


def test_generated_tables_are_current():
    """Schema and column tables equal what `python -m ckptreport.docs README.md` generates."""
    assert docs.regenerate(README) == README, "run: make docs"


def test_first_screen_has_the_two_setup_commands():
    """The first screen shows one command that builds the defaults and one that runs the tests."""
    first = "\n".join(README.splitlines()[:40])
    assert "make build" in first and "make test" in first
    makefile = (REPO / "Makefile").read_text()
    assert re.search(r"^build: .*\n\t\$\(BIN\)/ckptreport build$", makefile, re.M)
    assert re.search(
        r"^test: .*\n\t\$\(BIN\)/python -m pytest( -n auto( --dist worksteal)?)?$", makefile, re.M
    )
    assert "make test" in (REPO / ".ci" / "run").read_text()


def test_every_ckptreport_command_in_the_readme_runs(tmp_path, monkeypatch):
    """Each `ckptreport ...` line of the README's shell blocks exits 0 (with its DASK_...= prefixes);
    one that names a Dask scheduler runs against a two-worker LocalCluster started at that address,
    as the README's `dask scheduler` and `dask worker` lines start one."""
    monkeypatch.chdir(REPO)
    commands = [
        line.split("#")[0].strip()
        for block in _blocks("sh")
        for line in block.splitlines()
        if re.match(r"^(DASK_\w+=\S+ )*ckptreport ", line)  # not the shell-completion lines
    ]
    assert len(commands) >= 2
    cluster = None
    try:
        for command in commands:
            address = re.search(r"tcp://([\d.]+):(\d+)", command)
            if address and cluster is None:
                from distributed import LocalCluster

                host, port = address.groups()
                cluster = LocalCluster(
                    n_workers=2,
                    threads_per_worker=1,
                    host=host,
                    scheduler_port=int(port),
                    dashboard_address=":0",
                )
            _run_readme_command(command, tmp_path, monkeypatch)
    finally:
        if cluster is not None:
            cluster.close()
    assert cluster is not None  # the README's Dask lines ran on a cluster


def _run_readme_command(command: str, tmp_path, monkeypatch) -> None:
    words = shlex.split(command)
    with monkeypatch.context() as m:
        while "=" in words[0]:
            name, value = words.pop(0).split("=", 1)
            m.setenv(name, value)
        args = words[1:]
        if args[0] == "build":
            args += [
                "--out",
                str(tmp_path / "out"),
                "--workbook-rows",
                "200",
            ]  # a light workbook: quicker
        result = CliRunner().invoke(main, args, catch_exceptions=False)
        assert result.exit_code == 0, (command, result.output)


def test_readme_explain_excerpt_is_real_output(monkeypatch):
    """Every line of the explain excerpt appears in what explain prints (README lines may end in '...')."""
    monkeypatch.chdir(REPO)
    excerpt = next(b for b in _blocks("text") if b.startswith("llama3-405b (adamw-bf16-grads)"))
    out = (
        CliRunner()
        .invoke(
            main,
            [
                "explain",
                "llama3-405b",
                "dgx-h100",
                "pfs-100",
                "--gpus",
                "1024",
                "--interval",
                "30min",
                "--recipe",
                "adamw-bf16-grads",
            ],
        )
        .stdout
    )
    for line in excerpt.splitlines():
        if line.strip() in ("", "..."):
            continue
        assert any(got.startswith(line.rstrip(".").rstrip()) for got in out.splitlines()), line


def test_readme_error_example_is_real_output(models_copy, monkeypatch):
    """The README's error example is what the tool prints for those three mistakes."""
    hardware = models_copy / "hardware.yaml"
    hardware.write_text(
        hardware.read_text().replace(
            "storage_nic: {value: 2 x 400 Gb/s, basis: assumption",
            "storage_nic: {value: 100 GB, basis: assumption",
            1,
        )
    )
    plan = models_copy / "plan.yaml"
    plan.write_text(
        plan.read_text().replace(
            "recipes: [adamw-bf16]\n", "recipes: [adamw-bf16]\nskus: [dgx-h10]\n", 1
        )
    )
    storage = models_copy / "storage.yaml"
    storage.write_text(
        storage.read_text().replace("per_node_write: 2 GB/s", "per_node_wrte: 2 GB/s", 1)
    )
    monkeypatch.chdir(models_copy.parent)
    result = CliRunner().invoke(main, ["validate", "--models", "models"])
    assert result.exit_code == 2
    excerpt = next(b for b in _blocks("text") if "problems found" in b)
    got = result.output.splitlines()
    assert len(got) == len(excerpt.splitlines())
    for want, line in zip(excerpt.splitlines(), got):
        assert line.startswith(want.removesuffix("...")), (want, line)


def test_readme_summary_excerpt_is_real_output(default_build):
    """Every line of the README's summary excerpt is a line `ckptreport build` prints on the defaults."""
    excerpt = next(b for b in _blocks("text") if b.startswith("model              sku"))
    out = [line.rstrip() for line in default_build.cli.stdout.splitlines()]
    for line in excerpt.splitlines():
        assert line.rstrip() in out, line


def test_readme_decision_excerpt_is_real_output(default_build):
    """The purchase and the decision the README shows are what `ckptreport build` prints on the
    defaults, line by line in order (it once showed a pick three changes old)."""
    for head in ("The purchase, for each cluster", "The decision, for each job"):
        excerpt = next(
            b for b in _blocks("text") if b.startswith("$ ckptreport build\n") and f"\n{head}" in b
        )
        lines = [ln.rstrip() for ln in excerpt.splitlines()[1:] if ln != "..."]
        out = [line.rstrip() for line in default_build.cli.stdout.splitlines()]
        start = out.index(lines[0])
        assert out[start : start + len(lines)] == lines, head


def test_readme_diff_excerpt_is_real_output(models_copy, monkeypatch):
    """The README's diff example: a copy of the models with superpod storage's price per GB/s up
    from $25,000 to $50,000 prints those lines."""
    q4 = models_copy.parent / "models-q4"
    import shutil

    shutil.copytree(models_copy, q4)
    storage = q4 / "storage.yaml"
    storage.write_text(
        storage.read_text().replace(
            'capex_usd_per_GBps: {value: "$25,000"', 'capex_usd_per_GBps: {value: "$50,000"', 1
        )
    )
    monkeypatch.chdir(models_copy.parent)
    excerpt = next(b for b in _blocks("text") if b.startswith("$ ckptreport diff"))
    command, *lines = excerpt.splitlines()
    result = CliRunner().invoke(main, shlex.split(command)[2:])
    said = re.search(r"\(exit (\d)\)", excerpt)  # the exit code the excerpt's verdict states
    assert said and result.exit_code == int(said.group(1)), result.output
    got = result.stdout.splitlines()
    lines = [line for line in lines if line != "..."]
    assert got[: len(lines)] == lines


def test_readme_models_from_scratch_validate_and_build_on_the_first_try(tmp_path, monkeypatch):
    """The README's five YAML files, saved as their first line names them, validate and build as
    the README says; their schema line points at schemas `ckptreport schema` writes, and the files
    validate against them (what an editor checks as the user types)."""
    import json

    import jsonschema
    import yaml

    blocks = [b for b in _blocks("yaml") if b.startswith("# my-models/")]
    assert sorted(b.splitlines()[0] for b in blocks) == [
        f"# my-models/{f}.yaml" for f in ("engines", "hardware", "models", "plan", "storage")
    ]
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        path = tmp_path / block.splitlines()[0].removeprefix("# ")
        path.parent.mkdir(exist_ok=True)
        path.write_text(block)
    runner = CliRunner()
    assert runner.invoke(main, ["schema", "my-models/.schema"]).exit_code == 0
    for block in blocks:
        name = block.splitlines()[0].removeprefix("# my-models/")
        schema_ref = re.search(r"\$schema=(\S+)", block.splitlines()[1]).group(1)
        schema = json.loads((tmp_path / "my-models" / schema_ref).read_text())
        jsonschema.validate(yaml.safe_load(block), schema)
        assert schema_ref == f".schema/{name.removesuffix('.yaml')}.schema.json"
    valid = runner.invoke(main, ["validate", "--models", "my-models"])
    assert valid.exit_code == 0, valid.output
    assert "valid — 1 models, 1 recipes, 1 SKUs, 1 tiers, 2 engines" in valid.output
    built = runner.invoke(main, ["build", "--models", "my-models", "--out", "out", "-q"])
    assert built.exit_code == 0, built.output
    assert "llama3-8b" in built.stdout and (tmp_path / "out" / "ckptreport.xlsx").is_file()


def test_readme_sensitivity_excerpt_is_real_output(monkeypatch):
    """Every line of the README's sensitivity excerpt is a line of what the command prints."""
    monkeypatch.chdir(REPO)
    excerpt = next(b for b in _blocks("text") if b.startswith("$ ckptreport sensitivity"))
    out = CliRunner().invoke(main, ["sensitivity"]).stdout.splitlines()
    for line in excerpt.splitlines()[1:]:
        if line.strip() in ("", "..."):
            continue
        assert line in out, line


def test_readme_replica_recovery_table_is_what_explain_computes():
    """The README's table of ETTR against GPU count, async against replica_recovery, row by row."""
    import json

    section = README[README.index("## Replica-level recovery") :]
    rows = re.findall(r"^\| ([\d,]+) \| [^|]+ \| ([\d.]+)% \| ([\d.]+)% \|", section, re.M)
    assert [r[0] for r in rows] == ["1,024", "16,384", "100,352"]
    for gpus, want_async, want_replica in rows:
        for strategy, want in (("async", want_async), ("replica_recovery", want_replica)):
            argv = [
                "explain",
                "llama3-405b",
                "dgx-h100",
                "superpod-best",
                "--gpus",
                gpus.replace(",", ""),
            ]
            argv += [
                "--interval",
                "30min",
                "--strategy",
                strategy,
                "--engine",
                "dcp-async-cached",
                "--json",
            ]
            result = CliRunner().invoke(main, argv)
            assert result.exit_code == 0, result.output
            steps = {s["name"]: s["value"] for s in json.loads(result.output)["steps"]}
            assert f"{steps['optimal_ettr_pct']:.1f}" == want, (gpus, strategy)


def test_readme_published_goodput_table_is_what_calibrate_computes():
    """The README's table of published ETTR cases: each case's published figure, the tool's and the
    error are the calibration's, case by case (the last column, before the wall-clock fix, is history)."""
    from ckptreport.answer import calibration

    part = README[README.index("**Published goodput**") :]
    part = part[: part.index("\n\n", part.index("| case |"))]
    rows = re.findall(r"^\| `(\w+)` \| [^|]+ \| ([^|]+) \| ([^|]+) \| ([^|]+) \|", part, re.M)
    cases = {c.id: c for c in calibration.cases()}
    assert {r[0] for r in rows} == {i for i, c in cases.items() if c.kind == "goodput"} | {
        "llama3_405b_ettr_16k"
    }
    for case, published, tool, error in rows:
        c = cases[case]
        assert float(tool.strip(" %")) == float(f"{c.predicted:.3g}"), case
        if c.kind == "goodput":
            assert float(published.strip(" %")) == c.published and error.strip() == c.shown_error()
        else:
            assert published.strip() == f"> {c.low:g}%" and error.strip() == c.shown_error()
