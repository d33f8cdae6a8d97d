"""`run` releases the GIL: another Python thread makes progress while a
long run executes."""

import threading

import serq

# About 16 million events (an arrival and an end per session, 0.8 sessions
# a unit of time, 10^7 units) and no samples: a second or more of work.
LONG = """
stage srv : fifo;
workload { arrive poisson(0.8); }
session { run srv (~exp(1)); }
run { horizon 1e7; }
"""

# Python steps the main thread takes while the run goes on: far fewer than
# fit in the run's time, far more than fit in one switch interval (5 ms),
# the most a GIL-holding run could leave the main thread before it starts.
STEPS = 2_000_000


def test_another_thread_runs_python_while_a_run_executes():
    program = serq.compile(source=LONG)
    started = threading.Event()
    reports = []

    def simulate():
        started.set()
        reports.append(serq.run(program))

    runner = threading.Thread(target=simulate)
    runner.start()
    started.wait()
    steps = 0
    while steps < STEPS:
        steps += 1
    # Were the GIL held by the run, these steps could only have been taken
    # before it started or after it ended: the runner would be done.
    still_running = runner.is_alive()
    runner.join()
    assert still_running, "the main thread got no Python time while the run executed"
    assert reports[0].events > 10_000_000
