"""The YAML reader (yamlfile.py): plain text in, every scalar as written, every key's place kept,
surprises refused — the same with libyaml's fast parser and PyYAML's own."""

from __future__ import annotations

import pytest
import yaml

from ckptreport.base.errors import InputError
from ckptreport.read import yamlfile

LOADERS = [yaml.SafeLoader] + ([yaml.CSafeLoader] if getattr(yaml, "CSafeLoader", None) else [])


@pytest.fixture(params=LOADERS, ids=lambda loader: loader.__name__)
def parse(request, monkeypatch):
    monkeypatch.setattr(yamlfile, "_LOADER", request.param)
    return lambda text: yamlfile.parse(text.encode(), "f.yaml")


def test_scalars_stay_as_written(parse):
    data, marks = parse(
        "a: 1e9\nb: no\nc: 08\nd: 2024-01-15\ne: =\nf: ~\ng: ''\nh:\ni: !!str 5\nj: [x, null, 'null']\n"
    )
    assert data == {
        "a": "1e9",
        "b": "no",
        "c": "08",
        "d": "2024-01-15",
        "e": "=",
        "f": None,
        "g": "",
        "h": None,
        "i": "5",
        "j": ["x", None, "null"],
    }
    assert marks[("d",)] == (4, 1) and marks[("j", 1)] == (10, 8) and marks[()] == (1, 1)


def test_nested_places(parse):
    data, marks = parse("tiers:\n  t1:\n    write: {value: 5 GB/s, source: x}\n  t2: {}\n")
    assert data == {"tiers": {"t1": {"write": {"value": "5 GB/s", "source": "x"}}, "t2": {}}}
    assert marks[("tiers", "t1", "write")] == (3, 5) and marks[
        ("tiers", "t1", "write", "source")
    ] == (3, 28)


@pytest.mark.parametrize(
    "text, message",
    [
        ("a: 1\na: 2\n", "f.yaml:2:1: a: duplicate key (first defined on line 1)"),
        ("<<: {a: 1}\nb: 2\n", "merge keys"),
        ("? [a]\n: 1\n", "a key must be plain text"),
        ("a: !foo x\n", "tag !foo is not allowed"),
        ("a: !!binary aGk=\n", "tag tag:yaml.org,2002:binary is not allowed"),
        ("a: !!set {x}\n", "tag tag:yaml.org,2002:set is not allowed"),
        ("a: &x 1\nb: *x\n", "aliases ('*name') are not supported"),
        ("a: 1\n---\nb: 2\n", "one YAML document"),
        ("# only a comment\n", "file is empty"),
        ("".join("  " * i + f"k{i}:\n" for i in range(80)), "nested too deeply"),
        ("a: [1, 2\nb: 3\n", "YAML syntax error"),
    ],
)
def test_surprises_are_refused_with_their_place(parse, text, message):
    with pytest.raises(InputError) as e:
        parse(text)
    assert message in e.value.render()


def test_every_problem_at_once(parse):
    with pytest.raises(InputError) as e:
        parse("a: 1\na: 2\nb: !foo x\n<<: {}\n")
    assert len(e.value.problems) == 3


def test_an_anchor_alone_is_fine(parse):
    assert parse("a: &x 1\n")[0] == {"a": "1"}
