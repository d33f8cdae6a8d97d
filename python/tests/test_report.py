"""A report read by name: run figures, observations, stage and pool rows as
the JSON report's fields, undefined figures as pyserq gives them, pickling."""

import json
import math
import pickle

import pytest

import serq

# Two sessions at t = 0. Session k: hold kv (4) around d (1 + k); the
# second waits for the first to release kv at 1 (cap 4). observe `done`
# at the end: session 0 at 1, session 1 at 1 + 2 = 3. `never` is never
# reached. `q` is a fifo nobody uses.
PROGRAM = """
pool kv { cap 4; }
stage d : delay;
stage q : fifo;
workload { arrive batch(2); }
session {
  hold kv (4) { run d (1 + serial); }
  observe done = now;
  branch (0) { observe never = 1; }
  turn;
}
run { horizon 10; }
"""


def report():
    return serq.run(serq.compile(source=PROGRAM))


def test_run_figures_are_the_json_reports():
    r = report()
    fields = json.loads(r.json())
    for name in ("horizon", "end", "warmup", "seed", "events", "arrivals", "ended", "turns", "mean_live"):
        assert getattr(r, name) == fields[name], name
    # Two sessions, both ended, one turn each; live 2 over [0, 1], 1 over
    # [1, 3]: (2 + 2) / 10.
    assert (r.arrivals, r.ended, r.turns, r.mean_live) == (2, 2, 2, 0.4)
    assert (r.horizon, r.end, r.warmup, r.seed) == (10.0, 10.0, 0.0, 1)


def test_an_observation_has_its_samples_and_statistics():
    done = report().observe("done")
    assert (done.name, done.samples, done.count) == ("done", [1.0, 3.0], 2)
    # mean 2; variance ((1-2)² + (3-2)²)/1 = 2, cv² = 2/4; p99 the larger.
    assert (done.mean, done.cv2, done.p99) == (2.0, 0.5, 3.0)
    # Below 40 samples there is no batch-means CI: inf, as pyserq gives it.
    assert done.ci == math.inf


def test_an_observation_has_the_json_reports_percentiles():
    r = report()
    done = r.observe("done")
    # Nearest rank over [1, 3]: p50 is the ⌈0.5·2⌉ = 1st, p90 and p95 the 2nd.
    assert (done.p50, done.p90, done.p95, done.p99) == (1.0, 3.0, 3.0, 3.0)
    fields = json.loads(r.json())["observes"]["done"]
    for name in ("p50", "p90", "p95", "p99"):
        assert getattr(done, name) == fields[name], name
    never = r.observe("never")
    assert all(math.isnan(getattr(never, name)) for name in ("p50", "p90", "p95"))


def test_an_unreached_observation_is_listed_with_nan_figures():
    never = report().observe("never")
    assert (never.count, never.samples) == (0, [])
    assert math.isnan(never.mean) and math.isnan(never.cv2) and math.isnan(never.p99)


def test_observes_is_a_dict_in_program_order():
    observes = report().observes
    assert isinstance(observes, dict)
    assert list(observes) == ["done", "never"]
    assert observes["done"].samples == [1.0, 3.0]


def test_unknown_names_give_none():
    r = report()
    assert r.observe("ttft") is None
    assert r.stage("x") is None
    assert r.pool("x") is None
    assert r.stages_named("x") == []


def test_stage_and_pool_rows_expose_the_json_rows_fields():
    r = report()
    fields = json.loads(r.json())
    for row, expected in zip(r.stages, fields["stages"]):
        for name, value in expected.items():
            got = getattr(row, name)
            assert got == value or (value is None and math.isnan(got)), (row.name, name)
    for row, expected in zip(r.pools, fields["pools"]):
        for name, value in expected.items():
            got = getattr(row, name)
            assert got == value or (value is None and math.isnan(got)), (row.name, name)
    # d serves [0, 1] and [1, 3]: busy 3 of 10. kv holds 4 over [0, 3]: 1.2
    # on average; the second hold waited 1, the first 0: mean wait 0.5.
    d, kv = r.stage("d"), r.pool("kv")
    assert (d.utilization, d.completed, d.mean_service) == (0.3, 2, 1.5)
    assert (kv.mean_used, kv.mean_wait, kv.admissions) == (1.2, 0.5, 2)
    # q completed nothing: its waits are undefined (null in JSON, NaN here).
    q = r.stage("q")
    assert q.completed == 0 and math.isnan(q.mean_wait) and math.isnan(q.mean_service)


def test_stages_named_lists_a_familys_members_in_index_order():
    r = serq.run(
        serq.compile(
            source="stage e[3] : delay; workload { arrive batch(3); } "
            "session { run e[serial] (1 + serial); } run { horizon 10; }"
        )
    )
    members = r.stages_named("e")
    # e[k] is busy 1 + k of 10.
    assert [(s.name, s.member, s.utilization) for s in members] == [
        ("e", 0, 0.1),
        ("e", 1, 0.2),
        ("e", 2, 0.3),
    ]
    assert r.stage("e").member == 0
    assert [(s.name, s.member) for s in r.stages] == [(s.name, s.member) for s in members]


def test_a_report_and_a_program_pickle_and_come_back_equal():
    program = serq.compile(source=PROGRAM)
    r = serq.run(program)
    back = pickle.loads(pickle.dumps(r))
    assert back.json(samples=True) == r.json(samples=True)
    assert back.observe("done").samples == [1.0, 3.0]
    again = pickle.loads(pickle.dumps(program))
    assert again.to_json() == program.to_json()
    assert serq.run(again).json() == r.json()


def test_the_queues_that_grow_survive_pickling():
    # Arrivals at 2 to a server of rate 1: its jobs grow by about 1 a unit
    # of time; the verdict and `growing` read each stage's series, which a
    # Ray or Dask worker's report must bring back (docs/report.md §2.1).
    r = serq.run(
        serq.compile(
            source="stage idle : fifo; stage s : fifo; workload { arrive poisson(2); } "
            "session { run s (1); } run { horizon 2000; seed 1; }"
        )
    )
    back = json.loads(pickle.loads(pickle.dumps(r)).json())
    assert (back["stable"], back["stability"]) == (False, "overloaded")
    assert [(g["kind"], g["name"]) for g in back["growing"]] == [("stage", "s")]
    assert back == json.loads(r.json())


def test_non_finite_samples_survive_pickling():
    r = serq.run(
        serq.compile(
            source="stage s : delay; workload { arrive batch(2); } "
            "session { observe x = 1 / (serial - 1) - 1 / (serial - 1); observe y = 1 / 0; } "
            "run { horizon 1; }"
        )
    )
    back = pickle.loads(pickle.dumps(r))
    assert back.observe("y").samples == [math.inf, math.inf]
    x = back.observe("x").samples
    assert x[0] == 0.0 and math.isnan(x[1])


def test_the_table_is_serq_runs_text(run_cli, tmp_path):
    path = tmp_path / "p.sq"
    path.write_text(PROGRAM)
    assert serq.run(serq.compile(path)).table() == run_cli("run", str(path))


# Two sessions at t = 0. Session k observes its serial in the init block
# (t = 0, turn 0), runs a delay for 1 + k, turns (the turn block observes
# turn_no = 1 at 1 + k), observes the clock (1 + k, turn 1), runs the delay
# for 2, turns (turn_no = 2 at 3 + k) and observes the clock (3 + k, turn 2).
# pyserq 0.1.0 gives the same times, sessions and turns.
TWO_TURNS = """
stage d : delay;
workload { arrive batch(2); init { observe born = serial; } turn { observe tb = turn_no; } }
session { run d (1 + serial); turn; observe x = now; run d (2); turn; observe x = now; }
run { horizon 20; }
"""


def test_each_sample_has_its_time_session_and_turn():
    r = serq.run(serq.compile(source=TWO_TURNS))
    born, tb, x = r.observe("born"), r.observe("tb"), r.observe("x")
    assert (born.samples, born.times, born.sessions, born.turns) == ([0.0, 1.0], [0.0, 0.0], [0, 1], [0, 0])
    assert (tb.samples, tb.times, tb.sessions, tb.turns) == ([1.0, 1.0, 2.0, 2.0], [1.0, 2.0, 3.0, 4.0], [0, 1, 0, 1], [1, 1, 2, 2])
    assert (x.samples, x.times, x.sessions, x.turns) == ([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [0, 1, 0, 1], [1, 1, 2, 2])
    # Warm-up 1.5 drops the births (t = 0) and session 0's first turn (t = 1).
    late = serq.run(serq.compile(source=TWO_TURNS, warmup=1.5)).observe("x")
    assert (late.times, late.sessions, late.turns) == ([2.0, 3.0, 4.0], [1, 0, 1], [1, 2, 2])


def test_provenance_survives_pickling():
    x = pickle.loads(pickle.dumps(serq.run(serq.compile(source=TWO_TURNS)))).observe("x")
    assert (x.times, x.sessions, x.turns) == ([1.0, 2.0, 3.0, 4.0], [0, 1, 0, 1], [1, 1, 2, 2])


def test_a_study_replication_keeps_values_only():
    replication = serq._serq.replication(serq.compile(source=TWO_TURNS), 0)
    x = replication.report.observe("x")
    assert x.samples == [1.0, 2.0, 3.0, 4.0]
    for what in ("times", "sessions", "turns"):
        with pytest.raises(ValueError, match=f"^Observe.{what}: this report was made without"):
            getattr(x, what)
