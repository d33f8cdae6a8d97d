"""`run(program, timeline=PATH)`: the run's Chrome trace, as `serq run
--timeline` writes it (docs/timeline.md)."""

import json

import pytest
import serq

from conftest import REPO


def test_the_timeline_is_the_cli_s_and_counts_the_engine_s_iterations(tmp_path, run_cli):
    program = serq.compile(str(REPO / "examples/single-turn/vllm.sq"), horizon=50, warmup=0)
    out = tmp_path / "vllm.json"
    report = serq.run(program, timeline=str(out))
    events = json.loads(out.read_text())["traceEvents"]
    iterations = [e for e in events if e["ph"] == "X" and e["name"] == "iteration"]
    assert len(iterations) == report.stage("engine").iterations > 0
    # The same trace, byte for byte, as the CLI's.
    cli_out = tmp_path / "cli.json"
    run_cli("run", str(REPO / "examples/single-turn/vllm.sq"), "--horizon", "50", "--warmup", "0", "--timeline", str(cli_out))
    assert cli_out.read_bytes() == out.read_bytes()


def test_a_window_keeps_its_stretch_only(tmp_path):
    program = serq.compile(str(REPO / "examples/single-turn/vllm.sq"), horizon=50, warmup=0)
    out = tmp_path / "window.json"
    serq.run(program, timeline=out, timeline_window=(20, 30))
    events = [e for e in json.loads(out.read_text())["traceEvents"] if e["ph"] != "M"]
    assert events and all(20e6 <= e["ts"] <= 30e6 for e in events)


@pytest.mark.parametrize(
    "kwargs, says",
    [
        ({"timeline_window": (30, 20)}, "FROM < TO"),
        ({"timeline_window": (60, 70)}, "below the horizon"),
        ({"timeline_window": (-1, 20)}, "0 <= FROM"),
    ],
)
def test_a_bad_window_is_refused_before_the_run(tmp_path, kwargs, says):
    program = serq.compile(str(REPO / "examples/single-turn/vllm.sq"), horizon=50, warmup=0)
    out = tmp_path / "refused.json"
    with pytest.raises(ValueError, match=says):
        serq.run(program, timeline=str(out), **kwargs)
    assert not out.exists()


def test_an_unwritable_path_or_a_window_alone_is_refused():
    program = serq.compile(str(REPO / "examples/single-turn/mm1.sq"))
    with pytest.raises(ValueError, match="cannot write"):
        serq.run(program, timeline="/no/such/dir/t.json")
    with pytest.raises(ValueError, match="needs timeline="):
        serq.run(program, timeline_window=(0, 1))
