"""`replicate` and `sweep` return the rows `serq sweep` writes: the same
columns in the same order, the same numbers, whatever runs them."""

import concurrent.futures
import json

import pytest

import serq
from conftest import PYTHON_DIR, REPO

CAPACITY = REPO / "examples" / "pd-disaggregation" / "capacity.sq"
MM1 = REPO / "examples" / "single-turn" / "mm1.sq"


def jsonl(text):
    return [json.loads(line) for line in text.splitlines()]


def test_a_sweep_has_the_columns_and_numbers_of_serq_sweep(run_cli):
    rows = serq.sweep(CAPACITY, grid={"lam": [4, 8], "ND": range(1, 4)}, replications=3, horizon=200)
    printed = jsonl(
        run_cli(
            "sweep", str(CAPACITY), "--grid", "lam=4,8", "--grid", "ND=1:3:1",
            "--replications", "3", "--horizon", "200", "--format", "jsonl",
        )
    )
    assert [list(r) for r in rows] == [list(r) for r in printed]
    assert rows == printed
    # Whole-number axes and replications come back as ints.
    assert [(r["lam"], r["ND"]) for r in rows] == [(4, 1), (4, 2), (4, 3), (8, 1), (8, 2), (8, 3)]
    assert all(isinstance(r["ND"], int) and r["replications"] == 3 for r in rows)
    # A decoder that does not exist at a point has an empty cell: D[2] at ND = 2.
    assert rows[1]["D[2].util"] is None and rows[2]["D[2].util"] is not None


def test_grid_strings_are_serq_sweep_grid_syntax(run_cli):
    rows = serq.sweep(str(MM1), grid={}, replications=2)
    # No axis: one point, as `serq sweep` without --grid.
    assert rows == jsonl(run_cli("sweep", str(MM1), "--replications", "2", "--format", "jsonl"))
    source = "let lam = 0.5; stage s : fifo; workload { arrive poisson(lam); } " \
             "session { set t0 = now; run s (~exp(1)); observe r = now - t0; } run { horizon 500; }"
    ranged = serq.sweep(source, grid={"lam": "0.3:0.6:0.1"}, replications=2)
    # 0.3 + 3·0.1 is 0.6 to 12 digits, as --grid rounds it.
    assert [r["lam"] for r in ranged] == [0.3, 0.4, 0.5, 0.6]
    listed = serq.sweep(source, grid={"lam": [0.3, 0.4, 0.5, 0.6]}, replications=2)
    assert ranged == listed


def test_sets_apply_at_every_point_and_the_grid_wins(run_cli):
    rows = serq.sweep(CAPACITY, grid={"ND": [2, 3]}, replications=2, sets={"lam": 10, "ND": 7}, seed=4, horizon=150)
    printed = run_cli(
        "sweep", str(CAPACITY), "--grid", "ND=2,3", "--replications", "2",
        "--set", "lam=10", "--set", "ND=7", "--seed", "4", "--horizon", "150", "--format", "jsonl",
    )
    assert rows == jsonl(printed)


def test_replicate_is_one_row_of_the_sweep_columns(run_cli):
    rows = serq.replicate(serq.compile(MM1), replications=4)
    assert rows == jsonl(run_cli("sweep", str(MM1), "--replications", "4", "--format", "jsonl"))
    # And its numbers are serq run --replications's estimates.
    estimates = json.loads(run_cli("run", str(MM1), "--replications", "4", "--json"))
    response = estimates["observes"][0]["mean"]
    assert (rows[0]["response.mean"], rows[0]["response.ci"]) == (response["mean"], response["ci"])


def test_replicate_returns_a_list_holding_one_row_as_documented():
    rows = serq.replicate(serq.compile(MM1), replications=2)
    # The same shape as sweep's rows, so one loop reads both.
    assert isinstance(rows, list) and len(rows) == 1 and isinstance(rows[0], dict)
    assert "a list holding one row" in " ".join(serq.replicate.__doc__.split())


def test_one_replication_has_no_interval():
    rows = serq.replicate(serq.compile(MM1))
    assert rows[0]["replications"] == 1 and rows[0]["response.ci"] is None


@pytest.mark.parametrize("kind", ["threads", "processes"])
def test_rows_do_not_depend_on_a_concurrent_futures_executor(kind):
    pool = concurrent.futures.ThreadPoolExecutor(3) if kind == "threads" else concurrent.futures.ProcessPoolExecutor(2)
    grid = {"lam": [6, 10], "ND": [2, 3]}
    with pool:
        swept = serq.sweep(CAPACITY, grid=grid, replications=3, horizon=200, executor=pool)
        replicated = serq.replicate(serq.compile(MM1, horizon=3000), replications=3, executor=pool)
    assert swept == serq.sweep(CAPACITY, grid=grid, replications=3, horizon=200)
    assert replicated == serq.replicate(serq.compile(MM1, horizon=3000), replications=3)


def test_a_frame_has_the_rows_in_column_order():
    pandas = pytest.importorskip("pandas")
    rows = serq.sweep(CAPACITY, grid={"ND": [1, 2]}, replications=2, horizon=100)
    frame = serq.sweep(CAPACITY, grid={"ND": [1, 2]}, replications=2, horizon=100, frame=True)
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame.columns) == list(rows[0])
    assert frame["response.mean"].tolist() == [r["response.mean"] for r in rows]


def test_a_failing_point_raises_the_first_failure_in_grid_order():
    source = "let d = 1; stage s : delay; workload { arrive batch(1); } " \
             "session { run s (serial + 1 - d); } run { horizon 2; }"
    # d = 2 and d = 3 both fail (a negative work is an error under
    # strict); d = 2 comes first in the grid.
    with pytest.raises(serq.RunError, match=r"^<source>: at d=2: replication 0 \(seed 1\)") as local:
        serq.sweep(source, grid={"d": [1, 2, 3]}, strict=True)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        with pytest.raises(serq.RunError) as elsewhere:
            serq.sweep(source, grid={"d": [1, 2, 3]}, executor=pool, strict=True)
    assert str(elsewhere.value) == str(local.value)


def test_a_point_that_does_not_compile_is_rendered_with_its_values():
    source = "let N = 1;\nstage s[N] : delay;\nworkload { arrive batch(1); }\nsession { run s[0] (1); }\nrun { horizon 2; }\n"
    with pytest.raises(serq.CompileError) as caught:
        serq.sweep(source, grid={"N": [2, 0.5]})
    assert "error[array-size]" in str(caught.value)
    assert str(caught.value).endswith("1 error(s) in <source> at N=0.5")


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="replications"):
        serq.replicate(serq.compile(MM1), replications=0)
    with pytest.raises(ValueError, match="no file `nope.sq`"):
        serq.sweep("nope.sq", grid={})
    with pytest.raises(ValueError, match="has no values"):
        serq.sweep(MM1, grid={"lam": []})
    with pytest.raises(ValueError, match="step"):
        serq.sweep(MM1, grid={"lam": "1:2:0"})
    with pytest.raises(ValueError, match='no executor "spark"'):
        serq.sweep(MM1, grid={}, executor="spark")
    with pytest.raises(TypeError, match="is not None"):
        serq.sweep(MM1, grid={}, executor=42)


def test_the_rows_are_serq_sweeps_csv_percentiles_and_stability_included(run_cli):
    # lam = 30 is past a single decoder's capacity (D.util near 1 at lam = 4
    # already): its live sessions grow, so the point is not stable.
    rows = serq.sweep(CAPACITY, grid={"lam": [4, 30], "ND": [1]}, replications=3, horizon=200)
    text = run_cli(
        "sweep", str(CAPACITY), "--grid", "lam=4,30", "--grid", "ND=1",
        "--replications", "3", "--horizon", "200", "--format", "csv",
    )
    header, *lines = [line.split(",") for line in text.splitlines()]
    assert list(rows[0]) == header
    assert header[:6] == ["lam", "ND", "replications", "stable", "stability", "warnings"]
    assert header[6:14] == [
        "ttft.mean", "ttft.ci", "ttft.p50", "ttft.p50_ci", "ttft.p90", "ttft.p90_ci", "ttft.p99", "ttft.p99_ci",
    ]

    # A flag prints as true or false, a word as itself, an undefined cell
    # empty, a number in its shortest round-trip form.
    flags = {"true": True, "false": False, "": None}
    assert len(lines) == len(rows)
    for row, line in zip(rows, lines):
        assert len(line) == len(header)
        for column, printed in zip(header, line):
            value = row[column]
            if isinstance(value, bool) or value is None:
                assert value is flags[printed], column
            elif isinstance(value, str):
                assert value == printed, column
            else:
                assert value == float(printed), column
    assert [r["stable"] for r in rows] == [True, False]
    assert [r["stability"] for r in rows] == ["steady", "overloaded"]


def test_a_swept_file_reads_its_libraries_beside_it(tmp_path, monkeypatch):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "cost.sq").write_text("def step_time(d) = 2 * d;\n")
    path = tmp_path / "main.sq"
    path.write_text(
        'use "lib/cost.sq";\nlet d = 1;\nstage s : delay;\nworkload { arrive batch(1); }\n'
        "session { run s (step_time(d)); observe response = now; }\nrun { horizon 10; }\n"
    )
    monkeypatch.chdir(PYTHON_DIR)
    rows = serq.sweep(path, grid={"d": [1, 3]})
    # One session on a delay for 2·d: response 2·d, utilisation 2·d / 10.
    assert [(r["response.mean"], r["s.util"]) for r in rows] == [(2.0, 0.2), (6.0, 0.6)]


# ND delay stations, one session per station at 0: session k keeps D[k]
# busy k + 1 of the horizon's 100, so D[k]'s utilisation is (k + 1)/100.
FAMILY = """let ND = 2;
stage D[ND] : delay;
workload { arrive batch(ND); }
session { run D[serial] (serial + 1); }
run { horizon 100; }
"""


def test_a_family_above_16_members_folds_as_serq_sweep_folds_it(run_cli, tmp_path):
    path = tmp_path / "family.sq"
    path.write_text(FAMILY)
    rows = serq.sweep(path, grid={"ND": [2, 20]})
    assert rows == jsonl(run_cli("sweep", str(path), "--grid", "ND=2,20", "--format", "jsonl"))
    assert list(rows[0])[5:] == ["D.util", "D.util.min", "D.util.max"]
    # ND = 2: 0.01 and 0.02; ND = 20: 0.01 ... 0.20, mean 10.5/100.
    assert rows[0]["D.util"] == pytest.approx(0.015) and rows[0]["D.util.max"] == 0.02
    assert rows[1]["D.util"] == pytest.approx(0.105) and rows[1]["D.util.min"] == 0.01
    assert rows[1]["D.util.max"] == pytest.approx(0.2)
    assert [r["stability"] for r in rows] == ["steady", "steady"]
    # members=True is --members: one column per member, None where absent.
    every = serq.sweep(path, grid={"ND": [2, 20]}, members=True)
    assert every == jsonl(run_cli("sweep", str(path), "--grid", "ND=2,20", "--members", "--format", "jsonl"))
    assert "D.util.min" not in every[0] and every[0]["D[1].util"] == 0.02 and every[0]["D[2].util"] is None
    # by_family=True folds a family of 2; replicate takes the same keywords.
    small = serq.sweep(path, grid={"ND": [2]}, by_family=True)
    assert small == jsonl(run_cli("sweep", str(path), "--grid", "ND=2", "--by-family", "--format", "jsonl"))
    [row] = serq.replicate(serq.compile(path), by_family=True)
    assert (row["D.util"], row["D.util.min"], row["D.util.max"]) == (pytest.approx(0.015), 0.01, 0.02)
    with pytest.raises(ValueError, match="contradict"):
        serq.sweep(path, grid={"ND": [2]}, by_family=True, members=True)


def test_a_folded_out_file_resumed_with_members_names_the_first_differing_column(tmp_path):
    path = tmp_path / "family.sq"
    path.write_text(FAMILY)
    out = tmp_path / "rows.csv"
    serq.sweep(path, grid={"ND": [2, 20]}, out=out)
    first = "".join(out.read_text().splitlines(keepends=True)[:2])
    out.write_text(first)
    with pytest.raises(ValueError, match=r"column 6 is `D.util`, where this sweep has `D\[0\].util`"):
        serq.sweep(path, grid={"ND": [2, 20]}, out=out, resume=True, members=True)
    assert out.read_text() == first
    rows = serq.sweep(path, grid={"ND": [2, 20]}, out=out, resume=True)
    assert [r["ND"] for r in rows] == [2, 20]
