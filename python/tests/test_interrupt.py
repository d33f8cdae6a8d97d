"""Sweeps that never lose work: Ctrl-C stops ``serq.sweep`` promptly on
every executor and raises ``serq.Interrupted`` with the finished rows;
``out=`` streams the rows to a file that ``resume=`` completes and that
a sweep without ``resume=`` or ``force=`` never overwrites."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import serq
from conftest import require_extra

# M/M/1 at rho = 0.5 to a horizon H: a point of the grid below takes tens
# to hundreds of milliseconds, so 16 of them take seconds.
SLOW = """let lam = 0.5;
let H = 20000;
stage srv : fifo;
workload { arrive poisson(lam); }
session { set t0 = now; run srv (~exp(1)); observe response = now - t0; end; }
run { horizon H; seed 3; }
"""
GRID = {"H": "20000:320000:20000"}
POINTS = 16

# The child: a sweep of SLOW into OUT on EXECUTOR, printing what it ended with.
CHILD = """
import json, sys
import serq
source, out, executor = sys.argv[1], sys.argv[2], sys.argv[3]
if executor == "threads":
    import concurrent.futures
    ex = concurrent.futures.ThreadPoolExecutor(1)
elif executor == "ray":
    import ray
    ray.init(num_cpus=1, object_store_memory=78 * 1024 * 1024, include_dashboard=False,
             log_to_driver=False, configure_logging=False)
    ex = "ray"
elif executor == "dask":
    import distributed
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    ex = distributed.Client(cluster)
else:
    ex = None
try:
    rows = serq.sweep(open(source).read(), {"H": "20000:320000:20000"}, out=out, executor=ex)
    print(json.dumps({"finished": len(rows)}), flush=True)
except serq.Interrupted as e:
    print(json.dumps({
        "keyboard": isinstance(e, KeyboardInterrupt),
        "rows": [r["H"] for r in e.rows],
        "done": e.done,
        "total": e.total,
    }), flush=True)
"""


def rows_in(path) -> int:
    """The whole rows of a CSV file (its header left out)."""
    try:
        with open(path) as f:
            return max(0, f.read().count("\n") - 1)
    except FileNotFoundError:
        return 0


def interrupted_sweep(tmp_path, executor: str) -> dict:
    """Runs CHILD on ``executor``, sends it SIGINT once two rows are in its
    file, and returns what it printed, with the file's rows."""
    source = tmp_path / "slow.sq"
    source.write_text(SLOW)
    out = tmp_path / f"slow-{executor}.csv"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(source), str(out), executor],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "RAYON_NUM_THREADS": "1"},
    )
    deadline = time.monotonic() + 120
    while rows_in(out) < 2:
        assert child.poll() is None, child.communicate()
        assert time.monotonic() < deadline, "no rows within 120 s"
        time.sleep(0.01)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=60)
    assert child.returncode == 0, stderr
    ended = json.loads(stdout.strip().splitlines()[-1])
    ended["file_rows"] = rows_in(out)
    ended["out"] = out
    ended["source"] = source
    return ended


def check_interrupted(ended: dict) -> None:
    assert ended["keyboard"] is True
    done = ended["done"]
    # Fewer points ran than the grid holds, and the rows are its first ones,
    # the same as the file's.
    assert 2 <= done < POINTS
    assert ended["total"] == POINTS
    assert ended["rows"] == [20000 * (i + 1) for i in range(done)]
    assert ended["file_rows"] == done


def test_ctrl_c_stops_a_local_sweep_and_raises_interrupted_with_the_finished_rows(tmp_path):
    ended = interrupted_sweep(tmp_path, "local")
    check_interrupted(ended)
    # resume= runs the rest: the file is then the uninterrupted sweep's.
    rows = serq.sweep(str(ended["source"]), GRID, out=ended["out"], resume=True)
    assert len(rows) == POINTS
    whole = tmp_path / "whole.csv"
    assert serq.sweep(str(ended["source"]), GRID, out=whole) == rows
    assert ended["out"].read_bytes() == whole.read_bytes()


def test_ctrl_c_stops_a_sweep_on_a_futures_executor(tmp_path):
    check_interrupted(interrupted_sweep(tmp_path, "threads"))


@pytest.mark.distributed
def test_ctrl_c_stops_a_sweep_on_ray(tmp_path):
    require_extra("ray")
    check_interrupted(interrupted_sweep(tmp_path, "ray"))


@pytest.mark.distributed
def test_ctrl_c_stops_a_sweep_on_dask(tmp_path):
    require_extra("distributed")
    check_interrupted(interrupted_sweep(tmp_path, "dask"))


def test_out_streams_the_rows_the_cli_writes(tmp_path, run_cli):
    source = tmp_path / "mm1.sq"
    source.write_text(SLOW)
    out = tmp_path / "rows.csv"
    grid = {"H": [2000, 4000, 6000]}
    rows = serq.sweep(str(source), grid, replications=2, out=out)
    cli = tmp_path / "cli.csv"
    run_cli("sweep", str(source), "--grid", "H=2000,4000,6000", "--replications", "2", "--out", str(cli))
    assert out.read_bytes() == cli.read_bytes()
    assert [r["H"] for r in rows] == [2000, 4000, 6000]
    jsonl = tmp_path / "rows.jsonl"
    serq.sweep(str(source), grid, replications=2, out=jsonl, format="jsonl")
    assert [json.loads(line)["H"] for line in jsonl.read_text().splitlines()] == [2000, 4000, 6000]


def test_a_non_empty_out_is_refused_without_resume_or_force_and_left_untouched(tmp_path):
    source = tmp_path / "mm1.sq"
    source.write_text(SLOW)
    out = tmp_path / "kept.csv"
    out.write_text("finished work\n")
    with pytest.raises(ValueError, match="not empty: pass resume=True"):
        serq.sweep(str(source), {"H": [2000]}, out=out)
    with pytest.raises(ValueError, match="contradict"):
        serq.sweep(str(source), {"H": [2000]}, out=out, resume=True, force=True)
    assert out.read_text() == "finished work\n"
    with pytest.raises(ValueError, match="not an interrupted run of this sweep"):
        serq.sweep(str(source), {"H": [2000]}, out=out, resume=True)
    assert out.read_text() == "finished work\n"
    rows = serq.sweep(str(source), {"H": [2000]}, out=out, force=True)
    assert len(rows) == 1
    assert out.read_text().count("\n") == 2


def test_resume_of_a_finished_file_runs_nothing_and_returns_its_rows(tmp_path):
    source = tmp_path / "mm1.sq"
    source.write_text(SLOW)
    out = tmp_path / "done.csv"
    first = serq.sweep(str(source), {"H": [2000, 4000]}, out=out)
    before = out.read_bytes()
    assert serq.sweep(str(source), {"H": [2000, 4000]}, out=out, resume=True) == first
    assert out.read_bytes() == before
