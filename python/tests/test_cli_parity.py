"""The package reports exactly what `serq run --json` prints: every example,
its samples, and the overrides (same seed, same numbers, same bytes)."""

import json

import pytest

import serq
from conftest import EXAMPLES, REPO


def test_there_are_examples_to_compare():
    # examples/single-turn and examples/pd-disaggregation: at least these ten.
    assert len(EXAMPLES) >= 10


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(REPO / "examples")))
def test_every_example_reports_what_serq_run_json_prints(path, run_cli):
    report = serq.run(serq.compile(path))
    assert report.json() + "\n" == run_cli("run", "--json", str(path))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(REPO / "examples")))
def test_every_example_has_the_samples_of_serq_run_json_samples(path, run_cli):
    report = serq.run(serq.compile(path))
    printed = run_cli("run", "--json", "--samples", str(path))
    assert report.json(samples=True) + "\n" == printed
    expected = json.loads(printed)["observes"]
    # Every observation's samples, as floats, in recording order.
    assert {name: report.observe(name).samples for name in report.observes} == {
        name: o["samples"] for name, o in expected.items()
    }


def test_overrides_match_the_cli_flags(run_cli):
    path = REPO / "examples" / "pd-disaggregation" / "capacity.sq"
    report = serq.run(
        serq.compile(path, sets={"ND": 3, "lam": 9}, seed=11, horizon=300, warmup=30)
    )
    printed = run_cli(
        "run", "--json", str(path), "--set", "ND=3", "--set", "lam=9",
        "--seed", "11", "--horizon", "300", "--warmup", "30",
    )
    assert report.json() + "\n" == printed
    assert (report.seed, report.horizon, report.warmup) == (11, 300.0, 30.0)
    assert len(report.stages_named("D")) == 3


def test_arrivals_override_matches_the_cli(run_cli):
    path = REPO / "examples" / "single-turn" / "mm1.sq"
    report = serq.run(serq.compile(path, arrivals=500, warmup=0))
    assert report.json() + "\n" == run_cli("run", "--json", str(path), "--arrivals", "500", "--warmup", "0")
    # An arrivals limit ends the run when the last session ends: 500 arrivals.
    assert report.arrivals == 500


def test_ir_compiles_as_its_source_does(run_cli, tmp_path):
    path = REPO / "examples" / "pd-disaggregation" / "after.sq"
    program = serq.compile(path)
    assert program.to_json() + "\n" == run_cli("ir", str(path))
    ir = tmp_path / "after.json"
    ir.write_text(program.to_json())
    from_file = serq.run(serq.compile(ir))
    from_text = serq.run(serq.Program.from_json(program.to_json()))
    assert from_file.json() == from_text.json() == serq.run(program).json()
