"""A script written for pyserq 0.1.0, unchanged but for its import (it read
`import pyserq`): it compiles from text and from a path with `sets`, runs,
and reads samples, stage rows and the JSON report. It prints what it read
as one JSON object; tests/test_pyserq_script.py checks it."""

import json
import os
import sys

import serq as pyserq

HERE = os.path.dirname(os.path.abspath(__file__))

SOURCE = """
stage s : delay;
stage d[2] : fifo;
workload { arrive batch(4); }
session {
  set t0 = now;
  run s (1 + serial);
  run d[serial - 2 * floor(serial / 2)] (1);
  observe response = now - t0;
}
run { horizon 20; }
"""


def main():
    text = pyserq.run(pyserq.compile(source=SOURCE))
    response = text.observe("response")
    path = pyserq.compile(os.path.join(HERE, "data", "delays.sq"), sets={"w": 2})
    sized = pyserq.run(path)
    report = json.loads(text.json())
    out = {
        "samples": response.samples,
        "mean": response.mean,
        "count": response.count,
        "d": [[s.name, s.completed, s.utilization, s.mean_wait] for s in text.stages_named("d")],
        "first_d": text.stage("d").completed,
        "missing": [text.observe("ttft") is None, text.stage("x") is None, text.stages_named("x")],
        "json_observes": report["observes"],
        "json_stages": report["stages"],
        "json_run": [report[k] for k in ("horizon", "end", "warmup", "seed", "arrivals", "ended", "turns", "mean_live")],
        "sized_samples": sized.observe("done").samples,
        "sized_d": [[s.completed, s.utilization] for s in sized.stages_named("d")],
        "observes": sorted(text.observes),
    }
    json.dump(out, sys.stdout, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
