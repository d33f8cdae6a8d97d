"""Capacity studies: ``replicate`` and ``sweep``, returning the rows
``serq sweep`` writes.

Invariant: every number in a row comes from serq's Rust study code
(``serq._serq``); this module only reads the program, lays out the grid,
hands the replications to an executor and turns the rows into dicts (or a
DataFrame). A replication's seed is the point's seed plus its index, so the
rows do not depend on the executor, its workers or the order tasks finish.
"""

from __future__ import annotations

import os
from numbers import Integral, Real
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _executors, _serq

Row = Dict[str, Union[None, bool, float, str]]
GridValues = Union[str, Real, Iterable[Real]]


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a study: no new point started, and the replications
    running stopped. ``rows`` holds the rows of the points that finished
    (in grid order, those an ``out=`` file kept first; a DataFrame with
    ``frame=True``), which an ``out=`` file holds too, so that
    ``resume=True`` runs only the rest. A ``KeyboardInterrupt``, so code
    that catches that still does."""

    def __init__(self, rows: Any, done: int, total: int) -> None:
        super().__init__(f"interrupted: {done} of {total} points done")
        self.rows = rows
        self.done = done
        self.total = total


def replicate(
    program: _serq.Program,
    replications: int = 1,
    executor: Any = None,
    *,
    slo: Optional[Union[str, Sequence[str]]] = None,
    frame: bool = False,
    strict: bool = False,
    by_family: bool = False,
    members: bool = False,
) -> Any:
    """Run ``program`` ``replications`` times, replication k on seed
    ``program.seed + k``, and return a list holding one row (the shape
    ``sweep`` returns, so one loop reads both), the row ``serq sweep``
    writes for the program's file without ``--grid``: ``replications``,
    ``stable`` (``False`` when the point is transient or overloaded across
    its replications, ``None`` when not judged), ``stability`` (that
    verdict as a word: ``"steady"``, ``"transient"`` or ``"overloaded"``),
    ``warnings``, then for each observation ``OBS.mean``, ``OBS.ci`` (the
    mean across replications and its 95% Student-t half-width),
    ``OBS.p50``, ``OBS.p50_ci``, ``OBS.p90``, ``OBS.p90_ci``, ``OBS.p99``,
    ``OBS.p99_ci`` (each replication's percentile, estimated likewise),
    then ``STAGE.util`` for each stage member. A family of more than 16
    members is three columns instead, ``STAGE.util``, ``STAGE.util.min``
    and ``STAGE.util.max`` (the mean, least and greatest member's
    utilisation); ``by_family=True`` folds every array so,
    ``members=True`` none (``serq sweep --by-family``, ``--members``).

    ``executor``: ``None`` (all local cores), ``"ray"`` (one Ray task per
    replication, after ``ray.init``), a ``dask.distributed.Client``, or a
    ``concurrent.futures.Executor``. ``frame=True`` returns a pandas
    DataFrame of one row instead of the list of one dict. ``strict=True`` makes a computed
    negative amount a run-time error (``serq run --strict``); without it
    such amounts are taken as 0 and counted in the ``warnings`` column.
    ``slo`` (``"ttft<=0.5"`` or a list of bounds) adds ``slo.attainment``,
    ``slo.attainment.ci``, ``slo.goodput``, ``slo.goodput.ci``,
    ``slo.requests`` and ``slo.unfinished`` after ``warnings``
    (docs/report.md §10); it runs on the local executor only.
    """
    plan = _serq.Plan.of_program(program, _replications(replications), strict, _bounds(slo), by_family, members)
    return _study(plan, executor, _serq.Plan.output(plan), {"replications", "warnings"}, frame)


def sweep(
    path_or_source: Union[str, "os.PathLike[str]"],
    grid: Mapping[str, GridValues],
    replications: int = 1,
    executor: Any = None,
    *,
    sets: Optional[Mapping[str, float]] = None,
    defs: Optional[Mapping[str, str]] = None,
    seed: Optional[int] = None,
    horizon: Optional[float] = None,
    warmup: Optional[float] = None,
    arrivals: Optional[int] = None,
    slo: Optional[Union[str, Sequence[str]]] = None,
    frame: bool = False,
    strict: bool = False,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    format: str = "csv",
    resume: bool = False,
    force: bool = False,
    by_family: bool = False,
    members: bool = False,
) -> Any:
    """Run a program at every point of a grid of its ``let`` constants,
    ``replications`` times each, and return one row per point with the
    columns of ``serq sweep``: each grid name (in ``grid``'s order), then
    the columns of ``replicate`` (``None`` where undefined: a member the
    point lacks, an interval of one replication).

    ``path_or_source``: a program file, or program text (a string that
    names no file and holds a ``{`` or a ``;``). ``grid`` maps each name to
    its values: a list or ``range`` of numbers, one number, or a string in
    ``--grid`` syntax (``"4:12:2"``, ``"2,3,4"``). The first name varies
    slowest. Every point runs on the same seeds (common random numbers).
    ``sets`` and the other keywords are ``compile``'s and apply at every
    point; a grid name wins over a ``sets`` entry of the same name.

    ``executor``, ``frame``, ``strict`` and ``slo`` as for ``replicate``.
    ``by_family`` and ``members`` as for ``replicate``, a family's size
    being its largest over the grid's points, so every row has the same
    columns.

    ``out``: a file the rows are written to as the points complete (in
    grid order, each row flushed whole), as ``serq sweep --out`` writes it
    (``format``: ``"csv"`` or ``"jsonl"``). A non-empty ``out`` is refused
    (``ValueError``, the file untouched) unless ``resume=True`` (its rows,
    checked to be this grid's first points, are kept and only the rest
    run) or ``force=True`` (it is overwritten); both at once is an error.

    Ctrl-C stops the sweep promptly, whatever the executor: no new point
    starts, the replications running stop (on Ray and Dask, those not
    started are cancelled), and ``Interrupted`` (a ``KeyboardInterrupt``)
    is raised with the finished rows in ``.rows``.
    """
    if format not in ("csv", "jsonl"):
        raise ValueError(f'format must be "csv" or "jsonl", not {format!r}')
    count = _replications(replications)
    source, origin = _program_text(path_or_source)
    parsed = [_axis(axis, values) for axis, values in grid.items()]
    axes = [(axis, values) for axis, values, _ in parsed]
    whole = {"replications", "warnings"} | {axis for axis, _, is_whole in parsed if is_whole}
    plan = _serq.Plan(
        source,
        origin,
        origin if origin is not None else "<source>",
        axes,
        count,
        strict,
        _bounds(slo),
        by_family,
        members,
        sets=sets,
        defs=defs,
        seed=seed,
        horizon=horizon,
        warmup=warmup,
        arrivals=arrivals,
    )
    output = plan.output(os.fspath(out) if out is not None else None, format == "jsonl", resume, force)
    return _study(plan, executor, output, whole, frame)


def search(
    path_or_source: Union[str, "os.PathLike[str]"],
    slo: Union[str, Sequence[str]],
    attain: float,
    *,
    load: Optional[str] = None,
    at: Optional[Mapping[str, float]] = None,
    grid: Optional[Mapping[str, GridValues]] = None,
    cost: Optional[str] = None,
    monotone: Sequence[str] = (),
    tol: float = 0.01,
    max_replications: int = 30,
    executor: Any = None,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    format: str = "csv",
    resume: bool = False,
    force: bool = False,
    strict: bool = False,
    sets: Optional[Mapping[str, float]] = None,
    defs: Optional[Mapping[str, str]] = None,
    seed: Optional[int] = None,
    horizon: Optional[float] = None,
    warmup: Optional[float] = None,
    arrivals: Optional[int] = None,
    frame: bool = False,
) -> Dict[str, Any]:
    """``serq search``: the largest load (``load="lam=LO:HI"``) at which
    the attainment of the SLO ``slo`` (``"ttft<=0.5"`` or a list of such
    bounds, joint) is at least ``attain``, or with ``grid`` and ``cost``
    the cheapest configuration that attains it at a fixed load (``at``),
    or with both each configuration's limit. Returns ``{"answer": …,
    "rows": […]}``: ``answer`` is the object ``serq search --json`` prints
    (``limit``, ``best``, ``cost``, ``slo``, ``frontier``, …; docs/report.md
    §11), ``rows`` one dict per probe (the columns of ``--out``). The same
    seeds give the same answer as the command, whatever the executor.

    ``executor`` as for ``sweep`` (``None``, ``"ray"``, a dask Client, a
    ``concurrent.futures.Executor``): each probe's batch of replications
    runs there. ``out``, ``format``, ``resume``, ``force``: as ``serq
    search --out``; ``strict`` as for ``replicate``. The other keywords
    are ``compile``'s.
    """
    import json

    source, origin = _program_text(path_or_source)
    bounds = [slo] if isinstance(slo, str) else list(slo)
    parsed = [_axis(axis, values) for axis, values in (grid or {}).items()]
    axes = [(axis, values) for axis, values, _ in parsed]
    whole = {"replications"} | {axis for axis, _, is_whole in parsed if is_whole}
    if format not in ("csv", "jsonl"):
        raise ValueError(f'format must be "csv" or "jsonl", not {format!r}')
    dispatch = None
    if not _executors.is_local(executor):

        def dispatch(program: _serq.Program, ks: List[int]) -> List[Any]:
            return _executors.run_replications(executor, [(program, k) for k in ks], strict, bounds)

    answer, table = _serq.search(
        source,
        origin,
        origin if origin is not None else "<source>",
        bounds,
        float(attain),
        load,
        [(k, float(v)) for k, v in (at or {}).items()],
        axes,
        cost,
        list(monotone),
        float(tol),
        int(max_replications),
        dispatch,
        os.fspath(out) if out is not None else None,
        format == "jsonl",
        resume,
        force,
        strict,
        sets=sets,
        defs=defs,
        seed=seed,
        horizon=horizon,
        warmup=warmup,
        arrivals=arrivals,
    )
    return {"answer": json.loads(answer), "rows": _output(table, whole, frame)}


def _bounds(slo: Optional[Union[str, Sequence[str]]]) -> Optional[List[str]]:
    """An SLO's bounds as a list (``None``: no SLO)."""
    if slo is None:
        return None
    return [slo] if isinstance(slo, str) else list(slo)


def _study(plan: _serq.Plan, executor: Any, output: _serq.RowsOut, whole: set, frame: bool) -> Any:
    """Runs the points ``output`` lacks on ``executor``, each point's row
    added to ``output`` as it and every point before it are done; the
    rows, or ``Interrupted`` with those done."""
    if not _executors.is_local(executor) and plan.has_slo:
        raise ValueError("slo= runs on the local executor only (executor=None); use serq.search on a cluster")
    total = len(plan.programs())
    if _executors.is_local(executor):
        interrupted = output.run()
    else:
        interrupted = _run_elsewhere(plan, executor, output)
    rows = _output(output.rows(), whole, frame)
    if interrupted:
        raise Interrupted(rows, output.done, total)
    return rows


def _run_elsewhere(plan: _serq.Plan, executor: Any, output: _serq.RowsOut) -> bool:
    """Runs the points ``output`` lacks on a Ray, Dask or futures
    executor, adding each point once its replications are in (points in
    grid order). Ctrl-C cancels the replications not yet finished and
    returns ``True``; a run-time error cancels them and raises."""
    r = plan.replications
    programs = plan.programs()
    start = output.done
    jobs = [(programs[p], k) for p in range(start, len(programs)) for k in range(r)]
    outcomes: List[Any] = [None] * len(jobs)
    next_point = 0
    stream = _executors.stream_replications(executor, jobs, plan.strict)
    try:
        for index, outcome in stream:
            outcomes[index] = outcome
            while next_point * r < len(jobs):
                chunk = outcomes[next_point * r : (next_point + 1) * r]
                if any(o is None for o in chunk):
                    break
                output.point(start + next_point, chunk)
                next_point += 1
    except KeyboardInterrupt:
        return True
    finally:
        stream.close()
    return False


def _replications(replications: int) -> int:
    if isinstance(replications, bool) or not isinstance(replications, int) or replications < 1:
        raise ValueError(f"replications must be a whole number of at least 1, not {replications!r}")
    return replications


def _program_text(path_or_source: Union[str, "os.PathLike[str]"]) -> Tuple[str, Optional[str]]:
    """The program's text and the file it came from (``None`` for text)."""
    if isinstance(path_or_source, str) and not os.path.isfile(path_or_source):
        if "{" in path_or_source or ";" in path_or_source:
            return path_or_source, None
        raise ValueError(
            f"no file `{path_or_source}` (and it is not program text: that holds a `{{` or a `;`)"
        )
    path = os.fspath(path_or_source)
    if path.endswith(".json"):
        raise ValueError(f"`{path}` is IR, which has no `let` constants to sweep; sweep the source program")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    except OSError as e:
        raise ValueError(f"cannot read `{path}`: {e.strerror}") from e


def _axis(name: str, given: GridValues) -> Tuple[str, List[float], bool]:
    """One grid axis: its name, its values, and whether they are whole
    numbers as given (``range(1, 9)``, ``[2, 4]``, ``"2:8:2"``), so that
    its column holds ints. A string is ``--grid`` syntax."""
    if isinstance(given, str):
        name, values = _serq.parse_axis(f"{name}={given}")
        return name, values, all(v.is_integer() for v in values)
    items = [given] if isinstance(given, Real) else list(given)
    if not items:
        raise ValueError(f"the grid axis `{name}` has no values")
    whole = all(isinstance(v, Integral) and not isinstance(v, bool) for v in items)
    return name, [float(v) for v in items], whole


def _output(table: Tuple[Sequence[str], Sequence[Sequence[Any]]], whole: set, frame: bool) -> Any:
    """The rows as dicts keyed by column in column order (``whole``
    columns as ints), or as a pandas DataFrame with ``frame=True``."""
    columns, rows = table
    ints = [c in whole for c in columns]
    records = [
        {c: (int(x) if is_int and x is not None else x) for c, x, is_int in zip(columns, row, ints)}
        for row in rows
    ]
    if not frame:
        return records
    try:
        import pandas  # type: ignore[import-untyped]
    except ImportError as e:
        raise ImportError("frame=True needs pandas: pip install pandas (or serq[pandas])") from e
    return pandas.DataFrame.from_records(records, columns=list(columns))
