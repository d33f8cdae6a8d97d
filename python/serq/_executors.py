"""Where a study's replications run: Ray, Dask, or any
``concurrent.futures.Executor``.

Invariant: ``run_replications`` returns one outcome per job, in the jobs'
order, whatever order the tasks finish in; ``stream_replications`` yields
each with its job's index as it finishes, and cancels those not finished
when closed (Ctrl-C). A task never raises for a run-time error (it
returns the failure, and the driver reports the first by index). Ray and
Dask are imported only when asked for.
"""

from __future__ import annotations

from typing import Any, Dict, Generator, List, Sequence, Tuple

Stream = Generator[Tuple[int, Any], None, None]

from . import _serq

Job = Tuple[_serq.Program, int]


def replication(program: _serq.Program, k: int, strict: bool = False) -> Any:
    """One task: replication ``k`` of ``program``, on seed
    ``program.seed + k``, with the GIL released (``strict``: a computed
    negative amount is a run-time error)."""
    return _serq.replication(program, k, strict)


def is_local(executor: Any) -> bool:
    """``None`` and ``"local"`` run on this machine's cores in Rust."""
    return executor is None or (isinstance(executor, str) and executor == "local")


def slo_replication(program: _serq.Program, k: int, bounds: List[str], strict: bool = False) -> Any:
    """One task of ``serq.search``: replication ``k`` of ``program`` held
    to the SLO ``bounds``, as ``(attainment, goodput, requests, attained,
    unfinished)``."""
    return _serq.slo_replication(program, k, bounds, strict)


def run_replications(executor: Any, jobs: Sequence[Job], strict: bool = False, bounds: Any = None) -> List[Any]:
    """Every job's outcome, in job order (each run with ``strict``): a
    ``_Replication``, or with ``bounds`` (an SLO's) a ``slo_replication``
    tuple."""
    task, extra = (replication, (strict,)) if bounds is None else (slo_replication, (bounds, strict))
    if isinstance(executor, str):
        if executor == "ray":
            return _on_ray(jobs, task, extra)
        raise ValueError(f'no executor "{executor}": use None, "local", "ray", a dask Client or a concurrent.futures.Executor')
    if _is_dask_client(executor):
        return _on_dask(executor, jobs, task, extra)
    import concurrent.futures  # here, not at import: it costs `import serq` 10 ms

    if isinstance(executor, concurrent.futures.Executor):
        programs, ks = [p for p, _ in jobs], [k for _, k in jobs]
        columns = [[x] * len(jobs) for x in extra]
        return list(executor.map(task, programs, ks, *columns))
    raise TypeError(
        f"executor {executor!r} is not None, \"local\", \"ray\", a dask.distributed.Client "
        "or a concurrent.futures.Executor"
    )


def _distinct_programs(jobs: Sequence[Job]) -> List[Tuple[_serq.Program, List[int]]]:
    """The jobs grouped by program (by identity, in first-seen order), each
    with the indices of its jobs, so each program is sent once."""
    groups: List[Tuple[_serq.Program, List[int]]] = []
    slot = {}
    for index, (program, _) in enumerate(jobs):
        key = id(program)
        if key not in slot:
            slot[key] = len(groups)
            groups.append((program, []))
        groups[slot[key]][1].append(index)
    return groups


_remote: Dict[Any, Any] = {}


def _ray() -> Any:
    """The ``ray`` module, initialised, or an error that says what to do."""
    try:
        import ray
    except ImportError as e:
        raise ImportError('executor="ray" needs Ray: pip install "serq[ray]"') from e
    if not ray.is_initialized():
        raise RuntimeError(
            'executor="ray" runs on the cluster ray.init() connects to: call '
            'ray.init() (this machine) or ray.init(address="auto") (a cluster) first'
        )
    return ray


def _on_ray(jobs: Sequence[Job], task: Any, extra: Tuple[Any, ...]) -> List[Any]:
    ray = _ray()
    if task not in _remote:
        _remote[task] = ray.remote(task)
    remote = _remote[task]
    refs: List[Any] = [None] * len(jobs)
    for program, indices in _distinct_programs(jobs):
        shared = ray.put(program)
        for index in indices:
            refs[index] = remote.remote(shared, jobs[index][1], *extra)
    return ray.get(refs)


def _is_dask_client(executor: Any) -> bool:
    module = type(executor).__module__ or ""
    return module.split(".")[0] == "distributed" and hasattr(executor, "submit") and hasattr(executor, "gather")


def _on_dask(client: Any, jobs: Sequence[Job], task: Any, extra: Tuple[Any, ...]) -> List[Any]:
    futures: List[Any] = [None] * len(jobs)
    for program, indices in _distinct_programs(jobs):
        [shared] = client.scatter([program], broadcast=False)
        for index in indices:
            futures[index] = client.submit(task, shared, jobs[index][1], *extra, pure=False)
    return client.gather(futures)


# How long a stream waits for a task at most before it lets Python run its
# signal handlers (Ctrl-C) again.
_POLL = 0.05


def stream_replications(executor: Any, jobs: Sequence[Job], strict: bool = False) -> Stream:
    """``(index, outcome)`` for every job, as each finishes (in any order),
    each run with ``strict``. Waits at most ``_POLL`` seconds at a time, so
    Ctrl-C interrupts it promptly; closing it (or an exception through it)
    cancels the jobs not finished, so none starts after."""
    extra = (strict,)
    if isinstance(executor, str):
        if executor == "ray":
            return _stream_ray(jobs, replication, extra)
        raise ValueError(f'no executor "{executor}": use None, "local", "ray", a dask Client or a concurrent.futures.Executor')
    if _is_dask_client(executor):
        return _stream_dask(executor, jobs, replication, extra)
    import concurrent.futures

    if isinstance(executor, concurrent.futures.Executor):
        return _stream_futures(executor, jobs, replication, extra)
    raise TypeError(
        f"executor {executor!r} is not None, \"local\", \"ray\", a dask.distributed.Client "
        "or a concurrent.futures.Executor"
    )


def _stream_futures(executor: Any, jobs: Sequence[Job], task: Any, extra: Tuple[Any, ...]) -> Stream:
    import concurrent.futures

    futures = [executor.submit(task, program, k, *extra) for program, k in jobs]
    index = {f: i for i, f in enumerate(futures)}
    pending = set(futures)
    try:
        while pending:
            done, pending = concurrent.futures.wait(
                pending, timeout=_POLL, return_when=concurrent.futures.FIRST_COMPLETED
            )
            for f in done:
                yield index[f], f.result()
    finally:
        for f in pending:
            f.cancel()


def _stream_ray(jobs: Sequence[Job], task: Any, extra: Tuple[Any, ...]) -> Stream:
    # At most two tasks per CPU of the cluster in flight, the next submitted
    # as one finishes: closed, the stream submits no more and leaves those
    # few to finish. (Not ray.cancel: on Ray 2.60 cancelling queued tasks
    # kills the driver now and then, "Tried to complete task that was not
    # pending".)
    ray = _ray()
    if task not in _remote:
        _remote[task] = ray.remote(task)
    remote = _remote[task]
    window = max(1, 2 * int(ray.cluster_resources().get("CPU", 1)))
    shared: Dict[int, Any] = {}
    for program, indices in _distinct_programs(jobs):
        ref = ray.put(program)
        for i in indices:
            shared[i] = ref
    index: Dict[Any, int] = {}
    pending: List[Any] = []
    submitted = 0
    while submitted < len(jobs) or pending:
        while submitted < len(jobs) and len(pending) < window:
            ref = remote.remote(shared[submitted], jobs[submitted][1], *extra)
            index[ref] = submitted
            pending.append(ref)
            submitted += 1
        done, pending = ray.wait(pending, num_returns=1, timeout=_POLL)
        for ref in done:
            yield index[ref], ray.get(ref)


def _stream_dask(client: Any, jobs: Sequence[Job], task: Any, extra: Tuple[Any, ...]) -> Stream:
    import distributed

    futures: List[Any] = [None] * len(jobs)
    for program, indices in _distinct_programs(jobs):
        [shared] = client.scatter([program], broadcast=False)
        for i in indices:
            futures[i] = client.submit(task, shared, jobs[i][1], *extra, pure=False)
    index = {f.key: i for i, f in enumerate(futures)}
    pending = set(futures)
    try:
        while pending:
            try:
                done, pending = distributed.wait(pending, timeout=_POLL, return_when="FIRST_COMPLETED")
            except distributed.TimeoutError:
                continue
            for f in done:
                yield index[f.key], f.result()
    finally:
        if pending:
            client.cancel(list(pending))
