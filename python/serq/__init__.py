"""serq in Python: compile an LLM serving deployment written in serq's
language, simulate it in process, read its report, and run capacity studies
locally, on Ray or on Dask.

The API is pyserq 0.1.0's (``compile``, ``run``, ``Program``, ``Report``,
``Observe``, ``Stage``, ``Pool``, ``read_trace``, ``Rng``, ``IR_VERSION``,
``REPORT_VERSION``), so a pyserq script runs by changing its import, plus
``replicate`` and ``sweep``, which return the rows ``serq sweep`` writes.

    >>> import serq
    >>> p = serq.compile(source='''
    ...     stage s : delay;
    ...     workload { arrive batch(2); }
    ...     session { run s (1 + serial); observe done = now; }
    ...     run { horizon 10; }''')
    >>> r = serq.run(p)
    >>> r.observe("done").samples
    [1.0, 2.0]

Errors raise ``CompileError`` or ``RunError``, both ``ValueError``s whose
text is the diagnostic serq's CLI prints; Ctrl-C during a study raises
``Interrupted``, a ``KeyboardInterrupt`` holding the rows already done.
"""

from ._serq import (
    IR_VERSION,
    REPORT_VERSION,
    CompileError,
    Observe,
    Pool,
    Program,
    Report,
    Rng,
    RunError,
    Stage,
    __version__,
    compile,
    read_trace,
    run,
)
from ._study import Interrupted, replicate, search, sweep

__all__ = [
    "IR_VERSION",
    "REPORT_VERSION",
    "CompileError",
    "Interrupted",
    "Observe",
    "Pool",
    "Program",
    "Report",
    "Rng",
    "RunError",
    "Stage",
    "__version__",
    "compile",
    "read_trace",
    "replicate",
    "run",
    "search",
    "sweep",
]
