"""Type stubs of serq's native module (serq._serq); serq re-exports it."""

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union, final

_Path = Union[str, "os.PathLike[str]"]
_Rows = Tuple[List[str], List[List[Union[None, bool, float, str]]]]

__all__ = [
    "__version__",
    "IR_VERSION",
    "REPORT_VERSION",
    "CompileError",
    "RunError",
    "Program",
    "Report",
    "Observe",
    "Stage",
    "Pool",
    "Rng",
    "_Replication",
    "Plan",
    "RowsOut",
    "compile",
    "run",
    "read_trace",
    "_restore_program",
    "_restore_report",
    "parse_axis",
    "replication",
    "_restore_replication",
    "slo_replication",
    "search",
]

__version__: str
IR_VERSION: int
"""The IR version serq reads and writes (8); other versions are refused."""
REPORT_VERSION: int
"""The version of the JSON report's fields (1, pyserq's)."""

class CompileError(ValueError):
    """A program that does not compile: its text is every diagnostic (line,
    column, source line, caret, rule, help), as `serq check` prints them."""

class RunError(ValueError):
    """A run stopped by a run-time error: its text names the session, the
    clock and the statement, as `serq run` prints it."""

@final
class Program:
    """A compiled, validated program (its IR, and the text its run-time
    errors point into). Picklable."""

    @property
    def seed(self) -> int:
        """The seed (replication k of a study runs on seed + k)."""
    @property
    def name(self) -> str:
        """The file's name, `<source>` for text, `<json>` for `from_json`."""
    def to_json(self) -> str:
        """The IR as JSON, as `serq ir` prints it."""
    @staticmethod
    def from_json(text: str) -> "Program":
        """The program whose IR `text` is; validated; another IR version is
        refused with CompileError."""

@final
class Observe:
    """One observation: its statistics as `serq run --json` prints them and
    its samples. Each access to `samples` makes a new list."""

    @property
    def name(self) -> str: ...
    @property
    def count(self) -> int:
        """The number of samples (taken at t >= warmup)."""
    @property
    def mean(self) -> float:
        """The Welford mean; NaN without samples."""
    @property
    def ci(self) -> float:
        """The 95% half-width from 20 batch means; inf below 40 samples."""
    @property
    def cv2(self) -> float:
        """The squared coefficient of variation; NaN below 2 samples."""
    @property
    def p50(self) -> float:
        """The nearest-rank median; NaN without samples."""
    @property
    def p90(self) -> float:
        """The nearest-rank 90th percentile; NaN without samples."""
    @property
    def p95(self) -> float:
        """The nearest-rank 95th percentile; NaN without samples."""
    @property
    def p99(self) -> float:
        """The nearest-rank 99th percentile; NaN without samples."""
    @property
    def samples(self) -> List[float]:
        """Every sample, in recording order."""
    @property
    def times(self) -> List[float]:
        """When each sample was taken (the clock), in the samples' order.
        A study's replication keeps none: ValueError."""
    @property
    def sessions(self) -> List[int]:
        """The serial of the session that took each sample."""
    @property
    def turns(self) -> List[int]:
        """The turn each sample was taken in: its session's ``turn_no`` then
        (0 before the first ``turn;`` and in the ``init`` block)."""

@final
class Stage:
    """A stage member's figures: the JSON report's stage row, and `member`."""

    name: str
    member: Optional[int]
    """The index in its family; None for a family of one."""
    mean_number: float
    utilization: float
    """NaN for a shared stage of infinite capacity."""
    completed: int
    throughput: float
    mean_wait: float
    """NaN when no job completed."""
    mean_service: float
    """NaN when no job completed."""
    iterations: int

@final
class Pool:
    """A pool member's figures: the JSON report's pool row, and `member`."""

    name: str
    member: Optional[int]
    mean_used: float
    mean_cached: float
    mean_queue: float
    mean_holders: float
    mean_wait: float
    """NaN when no hold whose first pool this is was admitted."""
    admissions: int
    evicted_entries: int
    evicted_units: float
    preemptions: int
    spills: int
    rejected: int
    stuck: int

@final
class Report:
    """What a run reports: the fields of `serq run --json` by the same names.
    Picklable."""

    @property
    def horizon(self) -> float: ...
    @property
    def end(self) -> float:
        """The end of the measured interval: the horizon, or the drain
        instant under `arrivals`."""
    @property
    def warmup(self) -> float: ...
    @property
    def seed(self) -> int: ...
    @property
    def events(self) -> int: ...
    @property
    def arrivals(self) -> int: ...
    @property
    def ended(self) -> int: ...
    @property
    def turns(self) -> int: ...
    @property
    def mean_live(self) -> float: ...
    @property
    def observes(self) -> Dict[str, Observe]:
        """The observations by name, in program order."""
    @property
    def stages(self) -> List[Stage]:
        """One row per stage member, in declaration order."""
    @property
    def pools(self) -> List[Pool]:
        """One row per pool member, in declaration order."""
    @property
    def warnings(self) -> List[Dict[str, Any]]:
        """The run's warnings, as the JSON report's `warnings` holds them:
        `kind` ("negative_amount", "stability"), `count`, `message`, and
        the kind's own fields."""
    def json(self, samples: bool = False) -> str:
        """What `serq run --json` prints (`--json --samples` with
        samples=True), without the newline."""
    def table(self) -> str:
        """What `serq run` prints."""
    def observe(self, name: str) -> Optional[Observe]:
        """The observation `name`, or None."""
    def stage(self, name: str) -> Optional[Stage]:
        """The first stage named `name`, or None."""
    def stages_named(self, name: str) -> List[Stage]:
        """Every member of the stage `name`, in index order."""
    def pool(self, name: str) -> Optional[Pool]:
        """The first pool named `name`, or None."""
    def pools_named(self, name: str) -> List[Pool]:
        """Every member of the pool `name`, in index order."""

@final
class Rng:
    """One of serq's random streams under a seed: "arrivals", "machine",
    "session" (of `serial`) or "turn" (`turn` of `serial`)."""

    def __new__(cls, seed: int, stream: str = "arrivals", serial: int = 0, turn: int = 0) -> "Rng": ...
    def random_f64(self) -> float:
        """The stream's next uniform draw in [0, 1)."""

def compile(
    path: Optional[_Path] = None,
    *,
    source: Optional[str] = None,
    sets: Optional[Mapping[str, float]] = None,
    defs: Optional[Mapping[str, str]] = None,
    seed: Optional[int] = None,
    horizon: Optional[float] = None,
    warmup: Optional[float] = None,
    arrivals: Optional[int] = None,
    trace: Optional[_Path] = None,
    arrival_trace: Optional[_Path] = None,
) -> Program:
    """A program file (text, or IR if it ends in .json) or program text to a
    validated Program, with the overrides of `serq run` (`defs` is `--def`;
    `trace` replaces the workload's trace file, `arrival_trace` the file of
    `arrive trace`, a serq extension). Raises CompileError."""

def run(
    program: Program,
    *,
    strict: bool = False,
    timeline: Optional[_Path] = None,
    timeline_window: Optional[Tuple[float, float]] = None,
) -> Report:
    """Simulate `program` with the GIL released. Raises RunError (with
    `strict`, also for a computed negative amount). `timeline=PATH` writes
    the run's Chrome trace there (`serq run --timeline`), of
    `timeline_window=(FROM, TO)` only when given."""

def read_trace(path: _Path) -> List[List[Tuple[float, float, float, float]]]:
    """A trace's corpus sessions, each a list of its turns (new, out, think,
    forced), as a replay reads them. Raises ValueError for a missing or
    malformed file."""

# The study's native steps (serq.replicate and serq.sweep use them).

@final
class _Replication:
    @property
    def report(self) -> Optional[Report]: ...

@final
class Plan:
    def __new__(
        cls,
        source: str,
        origin: Optional[str],
        name: str,
        axes: Sequence[Tuple[str, Sequence[float]]],
        replications: int,
        strict: bool = False,
        slo: Optional[Sequence[str]] = None,
        by_family: bool = False,
        members: bool = False,
        **overrides: Any,
    ) -> "Plan": ...
    @staticmethod
    def of_program(
        program: Program,
        replications: int,
        strict: bool = False,
        slo: Optional[Sequence[str]] = None,
        by_family: bool = False,
        members: bool = False,
    ) -> "Plan": ...
    @property
    def replications(self) -> int: ...
    @property
    def strict(self) -> bool: ...
    @property
    def has_slo(self) -> bool: ...
    def programs(self) -> List[Program]: ...
    def run(self) -> _Rows: ...
    def gather(self, outcomes: Sequence[_Replication]) -> _Rows: ...
    def output(
        self, out: Optional[str] = None, jsonl: bool = False, resume: bool = False, force: bool = False
    ) -> "RowsOut": ...

@final
class RowsOut:
    """Where a sweep's rows go as its points complete (an ``out=`` file,
    with ``serq sweep --out``'s rules), and the rows so far."""
    @property
    def done(self) -> int: ...
    def rows(self) -> _Rows: ...
    def point(self, p: int, outcomes: Sequence[_Replication]) -> None: ...
    def run(self) -> bool: ...

def parse_axis(text: str) -> Tuple[str, List[float]]: ...
def replication(program: Program, k: int, strict: bool = False) -> _Replication: ...
def slo_replication(
    program: Program, k: int, bounds: Sequence[str], strict: bool = False
) -> Tuple[Optional[float], float, int, int, int]: ...
def search(
    source: str,
    origin: Optional[str],
    name: str,
    bounds: Sequence[str],
    attain: float,
    load: Optional[str],
    at: Sequence[Tuple[str, float]],
    grid: Sequence[Tuple[str, Sequence[float]]],
    cost: Optional[str],
    monotone: Sequence[str],
    tol: float,
    max_replications: int,
    dispatch: Any,
    out: Optional[str],
    jsonl: bool,
    resume: bool,
    force: bool,
    strict: bool = False,
    **overrides: Any,
) -> Tuple[str, _Rows]: ...
def _restore_program(ir: str, name: str, source: Optional[str]) -> Program: ...
def _restore_report(state: Any) -> Report: ...
def _restore_replication(ok: bool, state: Any) -> _Replication: ...
