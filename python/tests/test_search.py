"""`serq.search` gives `serq search --json`'s answer for the same seeds,
whichever executor runs its replications, and follows `--out`'s rules."""

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
import serq

from conftest import REPO, require_extra

SLO_PD = str(REPO / "examples" / "pd-disaggregation" / "slo.sq")
ARGS = dict(slo=["ttft<=0.5", "tpot<=0.05"], attain=0.9, at={"lam": 6}, grid={"ND": "3:6"}, cost="NP*8 + ND*8")


@pytest.fixture(scope="module")
def local():
    return serq.search(SLO_PD, **ARGS)


def test_search_matches_the_cli(local, run_cli):
    out = run_cli(
        "search", SLO_PD, "--at", "lam=6", "--grid", "ND=3:6", "--cost", "NP*8 + ND*8",
        "--slo", "ttft<=0.5", "--slo", "tpot<=0.05", "--attain", "0.9", "--json",
    )
    assert local["answer"] == json.loads(out)
    assert local["answer"]["best"] == {"ND": 5}
    assert [r["ND"] for r in local["rows"]] == [3, 4, 5]
    assert local["rows"][-1]["passed"] is True


def test_a_load_search_matches_the_cli(run_cli):
    mine = serq.search(SLO_PD, slo="ttft<=0.5", attain=0.9, load="lam=1:8", tol=0.05, horizon=200)
    out = run_cli(
        "search", SLO_PD, "--load", "lam=1:8", "--tol", "0.05", "--horizon", "200",
        "--slo", "ttft<=0.5", "--attain", "0.9", "--json",
    )
    assert mine["answer"] == json.loads(out)
    assert len(mine["answer"]["limit"]) == 2


def test_an_executor_gives_the_local_answer(local):
    with ThreadPoolExecutor(2) as pool:
        assert serq.search(SLO_PD, executor=pool, **ARGS) == local


@pytest.mark.distributed
def test_dask_gives_the_local_answer(local):
    distributed = require_extra("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        assert serq.search(SLO_PD, executor=client, **ARGS) == local


def test_out_is_refused_when_not_empty_and_resumed(tmp_path, local):
    out = tmp_path / "probes.csv"
    out.write_text("precious\n")
    with pytest.raises(ValueError, match="not empty"):
        serq.search(SLO_PD, out=out, **ARGS)
    with pytest.raises(ValueError, match="contradict"):
        serq.search(SLO_PD, out=out, resume=True, force=True, **ARGS)
    assert out.read_text() == "precious\n"
    assert serq.search(SLO_PD, out=out, force=True, **ARGS) == local
    lines = out.read_text().splitlines()
    assert lines[0].startswith("ND,replications,slo.attainment,")
    # A file cut after two probes resumes to the same answer.
    out.write_text("\n".join(lines[:3]) + "\n")
    resumed = serq.search(SLO_PD, out=out, resume=True, **ARGS)["answer"]
    # The same answer; only the third probe's 4 replications ran again.
    assert resumed["runs"] == 4
    assert {**resumed, "runs": None} == {**local["answer"], "runs": None}
    assert out.read_text().splitlines() == lines


def test_bad_input_is_a_value_error():
    with pytest.raises(ValueError, match="did you mean `ttft`"):
        serq.search(SLO_PD, slo="tfft<=0.5", attain=0.9, at={"lam": 6})
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        serq.search(SLO_PD, slo="ttft<=0.5", attain=0, at={"lam": 6})


def test_sweep_and_replicate_take_an_slo(run_cli):
    rows = serq.sweep(SLO_PD, grid={"ND": "4:5"}, slo=["ttft<=0.5", "tpot<=0.05"], replications=2)
    out = run_cli(
        "sweep", SLO_PD, "--grid", "ND=4:5", "--slo", "ttft<=0.5", "--slo", "tpot<=0.05",
        "--replications", "2", "--format", "jsonl",
    )
    cli_rows = [json.loads(line) for line in out.splitlines()]
    assert [r["slo.attainment"] for r in rows] == [r["slo.attainment"] for r in cli_rows]
    assert list(rows[0])[:11] == [
        "ND", "replications", "stable", "stability", "warnings", "slo.attainment",
        "slo.attainment.ci", "slo.goodput", "slo.goodput.ci", "slo.requests", "slo.unfinished",
    ]
    program = serq.compile(SLO_PD)
    [row] = serq.replicate(program, 2, slo="ttft<=0.5")
    assert 0 < row["slo.attainment"] <= 1
    assert "slo.attainment" not in serq.replicate(program, 2)[0]
