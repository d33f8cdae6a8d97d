"""compile's keywords are serq run's flags: `defs` is `--def`, `trace`
replaces the workload's trace file; `read_trace` reads a trace as a replay
does."""

import json

import pytest

import serq

DEF_PROGRAM = """
def step_time(x) = x + 1;
stage s : delay;
workload { arrive batch(2); }
session { run s (step_time(serial)); observe done = now; }
run { horizon 10; }
"""

TRACE_PROGRAM = """
stage s : delay;
workload { arrive batch(2); trace "turns.csv"; }
session { turn; run s (new / 100); }
run { horizon 10; }
"""

CSV = "session,turn,new,out,think\n7,0,100,20,1.5\n7,1,50,10,0\n3,0,300,40,0,1\n7,0,10,1,0\n"


def test_defs_replace_a_definitions_body_as_def_does(run_cli, tmp_path):
    path = tmp_path / "cost.sq"
    path.write_text(DEF_PROGRAM)
    report = serq.run(serq.compile(path, defs={"step_time": "2 * x + 3"}))
    # Session k runs for 2k + 3: done at 3 and 5 (the text's body gives 1 and 2).
    assert report.observe("done").samples == [3.0, 5.0]
    assert serq.run(serq.compile(path)).observe("done").samples == [1.0, 2.0]
    assert report.json() + "\n" == run_cli("run", "--json", str(path), "--def", "step_time=2 * x + 3")


def test_a_def_that_is_not_an_expression_is_a_compile_error():
    with pytest.raises(serq.CompileError, match="step_time"):
        serq.compile(source=DEF_PROGRAM, defs={"step_time": "run s (1)"})
    with pytest.raises(serq.CompileError, match="nope"):
        serq.compile(source=DEF_PROGRAM, defs={"nope": "1"})


def test_read_trace_groups_consecutive_rows_into_corpus_sessions(tmp_path):
    path = tmp_path / "turns.csv"
    path.write_text(CSV)
    # Rows of sessions 7, 7, 3, 7: three corpus sessions (the turn column is
    # not read); a missing sixth field is forced = 0.
    assert serq.read_trace(path) == [
        [(100.0, 20.0, 1.5, 0.0), (50.0, 10.0, 0.0, 0.0)],
        [(300.0, 40.0, 0.0, 1.0)],
        [(10.0, 1.0, 0.0, 0.0)],
    ]


def test_a_malformed_trace_names_its_line_and_column(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("0,0,100,20,1\n0,1,x,20,1\n")
    with pytest.raises(ValueError, match=r"line 2, column 3"):
        serq.read_trace(path)
    with pytest.raises(ValueError, match="absent.csv"):
        serq.read_trace(tmp_path / "absent.csv")


def test_a_programs_trace_is_read_beside_it_and_made_absolute(tmp_path, monkeypatch):
    (tmp_path / "turns.csv").write_text(CSV)
    path = tmp_path / "replay.sq"
    path.write_text(TRACE_PROGRAM)
    monkeypatch.chdir("/")
    program = serq.compile(path)
    assert json.loads(program.to_json())["trace"]["path"] == str(tmp_path / "turns.csv")


def test_trace_replaces_the_file_and_reads_it_from_the_current_directory(tmp_path, monkeypatch):
    (tmp_path / "other.csv").write_text(CSV)
    # The program's own turns.csv does not exist: with trace= it is never read.
    monkeypatch.chdir(tmp_path)
    program = serq.compile(source=TRACE_PROGRAM, trace="other.csv")
    assert json.loads(program.to_json())["trace"]["path"] == str(tmp_path / "other.csv")
    (tmp_path / "broken.csv").write_text("0,0,1\n")
    with pytest.raises(serq.CompileError, match="broken.csv"):
        serq.compile(source=TRACE_PROGRAM, trace="broken.csv")
    with pytest.raises(serq.CompileError, match="no `trace` workload"):
        serq.compile(source=DEF_PROGRAM, trace="other.csv")


# Two sessions at t = 0, each one turn of `new`: a delay of new / 100, then
# `done`. Session k replays corpus session k.
REPLAY = """
stage s : delay;
workload { arrive batch(2); trace "absent.csv" ordered; }
session { turn; run s (new / 100); observe done = now; }
run { horizon 10; }
"""


def test_two_traces_give_two_reports(tmp_path, monkeypatch, run_cli):
    path = tmp_path / "replay.sq"
    path.write_text(REPLAY)
    (tmp_path / "one.csv").write_text("session,turn,new,out,think\n1,0,100,1,0\n2,0,300,1,0\n")
    (tmp_path / "two.csv").write_text("session,turn,new,out,think\n1,0,50,1,0\n2,0,250,1,0\n")
    # Read from the current directory, not the program's.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    one = serq.run(serq.compile(path, trace="../one.csv"))
    two = serq.run(serq.compile(path, trace="../two.csv"))
    # one.csv: news 100 and 300, delays 1 and 3; two.csv: 0.5 and 2.5.
    assert one.observe("done").samples == [1.0, 3.0]
    assert two.observe("done").samples == [0.5, 2.5]
    assert one.stage("s").mean_number == (1 + 3) / 10
    assert two.stage("s").mean_number == (0.5 + 2.5) / 10
    # serq run --trace prints the same report.
    assert one.json() + "\n" == run_cli("run", "--json", str(path), "--trace", str(tmp_path / "one.csv"))


ARRIVAL_PROGRAM = """
stage s : delay;
workload { arrive trace "absent.csv" speed (2); }
session { observe at = now; observe n = new; run s (1); }
run { horizon 100; }
"""


def test_arrival_trace_replaces_the_arrive_trace_file_as_the_flag_does(run_cli, tmp_path, monkeypatch):
    (tmp_path / "rows.csv").write_text("time,new,out\n10,100,1\n14,300,1\n")
    path = tmp_path / "replay.sq"
    path.write_text(ARRIVAL_PROGRAM)
    monkeypatch.chdir(tmp_path)
    report = serq.run(serq.compile(path, arrival_trace="rows.csv"))
    # Rows at 0 and 4 s after the first, at speed 2: 0 and 2.
    assert report.observe("at").samples == [0.0, 2.0]
    assert report.observe("n").samples == [100.0, 300.0]
    assert report.json() + "\n" == run_cli("run", "--json", str(path), "--arrival-trace", str(tmp_path / "rows.csv"))
    with pytest.raises(serq.CompileError, match="absent.csv"):
        serq.compile(path)
    with pytest.raises(serq.CompileError, match="does not `arrive trace`"):
        serq.compile(source="stage s : delay; run { horizon 1; }", arrival_trace="rows.csv")
