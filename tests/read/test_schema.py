"""The JSON Schema editors read (issue 15, part 2): built from the same declarations as validation,
it accepts the shipped models as a standard validator (jsonschema) reads them, and refuses a
misspelt key, a missing unit and an unknown dtype. `ckptreport init` points each file at it."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from ckptreport.base.paths import shipped_models
from ckptreport.cli import main
from ckptreport.read import schema


class _Loader(yaml.SafeLoader):
    """YAML as a language server reads it for a schema: dates stay text (2025-07 is not a timestamp)."""


_Loader.yaml_implicit_resolvers = {
    k: [r for r in v if r[0] != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _errors(fname: str, text: str) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema.json_schemas()[fname])
    return [
        f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator.iter_errors(yaml.load(text, _Loader))
    ]


@pytest.mark.parametrize("fname", sorted(schema.FILES))
def test_the_shipped_models_validate_against_their_schema(fname):
    jsonschema.Draft202012Validator.check_schema(schema.json_schemas()[fname])
    assert _errors(fname, (shipped_models() / fname).read_text()) == []


def test_a_misspelt_key_a_missing_unit_and_an_unknown_dtype_fail():
    storage = (
        (shipped_models() / "storage.yaml")
        .read_text()
        .replace("per_node_write: 2 GB/s", "per_node_wrte: 2 GB/s", 1)
    )
    assert any(
        "per_node_wrte" in e and "Additional properties" in e
        for e in _errors("storage.yaml", storage)
    )
    plan = (shipped_models() / "plan.yaml").read_text()
    mfu = plan.replace("mfu: {value: 40%", "mfu: {value: 40", 1)
    assert any(e.startswith("mfu") for e in _errors("plan.yaml", mfu))
    models = (
        (shipped_models() / "models.yaml")
        .read_text()
        .replace("    weights: bf16", "    weights: bf61", 1)
    )
    assert any("bf61" in e for e in _errors("models.yaml", models))
    priced = (
        (shipped_models() / "hardware.yaml")
        .read_text()
        .replace("usd_per_gpu_hour: {value: $2.70", "usd_per_gpu_hour: {value: 2.70", 1)
    )
    assert (
        _errors("hardware.yaml", priced) == []
    )  # a bare number is dollars here, as for the parser


def test_descriptions_come_from_the_declarations():
    plan = schema.json_schemas()["plan.yaml"]
    assert plan["properties"]["host_recoverable"]["description"].startswith(
        "share of failures a job can restart"
    )
    assert "40%" in plan["properties"]["mfu"]["anyOf"][0]["examples"]


def test_schema_command_and_init_point_an_editor_at_the_schema(tmp_path):
    out = CliRunner().invoke(main, ["schema", str(tmp_path / "s")])
    assert out.exit_code == 0, out.output
    written = json.loads((tmp_path / "s" / "plan.schema.json").read_text())
    assert written == json.loads(json.dumps(schema.json_schemas()["plan.yaml"]))
    init = CliRunner().invoke(main, ["init", str(tmp_path / "m")])
    assert init.exit_code == 0, init.output
    for fname in schema.FILES:
        first = (tmp_path / "m" / fname).read_text().splitlines()[0]
        assert first == f"# yaml-language-server: $schema=.schema/{schema.schema_file(fname)}"
        assert (tmp_path / "m" / ".schema" / schema.schema_file(fname)).is_file()
    valid = CliRunner().invoke(main, ["validate", "--models", str(tmp_path / "m")])
    assert valid.exit_code == 0, valid.output
