"""`Rng` is serq's own stream: a Python check reproduces a run's draws."""

import math

import pytest

import serq


def test_arrival_gaps_are_the_arrival_streams_exponentials():
    report = serq.run(
        serq.compile(
            source="stage s : delay; workload { arrive poisson(4); } "
            "session { observe at = now; end; } run { horizon 2; seed 11; }"
        )
    )
    # The first session arrives at 0; each next one a gap -(1/4)·ln(1 - u)
    # later, u the arrival stream's next draw.
    rng = serq.Rng(11)
    expected = [0.0]
    while True:
        t = expected[-1] + -(1 / 4) * math.log(1 - rng.random_f64())
        if t > 2:
            break
        expected.append(t)
    assert report.observe("at").samples == expected


def test_session_and_turn_draws_are_their_streams():
    report = serq.run(
        serq.compile(
            source="stage s : delay; workload { arrive batch(3); init { set a = ~uniform(0, 1); } } "
            "session { observe first = a; observe u = ~uniform(0, 1); observe v = ~uniform(0, 1); end; } "
            "run { horizon 1; seed 5; }"
        )
    )
    for k in range(3):
        session = serq.Rng(5, "session", serial=k)
        assert report.observe("u").samples[k] == session.random_f64()
        assert report.observe("v").samples[k] == session.random_f64()
        # `init` is turn 0 of session k's turn streams.
        assert report.observe("first").samples[k] == serq.Rng(5, "turn", serial=k, turn=0).random_f64()


def test_a_stream_is_a_function_of_its_seed_and_purpose():
    draws = [serq.Rng(1).random_f64() for _ in range(3)]
    # A new generator of the same stream starts over; its draws are uniforms.
    assert draws == [serq.Rng(1).random_f64()] * 3
    assert all(0.0 <= u < 1.0 for u in draws)
    # Another seed, or another purpose under the same seed, draws otherwise.
    assert serq.Rng(2).random_f64() != draws[0]
    assert serq.Rng(1, "machine").random_f64() != draws[0]
    rng = serq.Rng(1)
    assert [rng.random_f64() for _ in range(3)] != draws


def test_an_unknown_stream_is_refused():
    with pytest.raises(ValueError, match='no stream `tokens`'):
        serq.Rng(1, "tokens")
