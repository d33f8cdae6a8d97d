"""A sweep on a local Ray cluster and on a local Dask cluster gives the rows
the local executor gives, whatever the workers and the finishing order."""

import pytest

import serq
from conftest import REPO, require_extra

CAPACITY = REPO / "examples" / "pd-disaggregation" / "capacity.sq"
GRID = {"lam": [4, 8, 12], "ND": [1, 2, 4]}
REPLICATIONS = 3
HORIZON = 200


def test_ray_without_init_says_what_to_do():
    ray = require_extra("ray")
    if ray.is_initialized():
        pytest.skip("Ray is running (started by another test module)")
    with pytest.raises(RuntimeError, match=r"ray\.init"):
        serq.sweep(CAPACITY, grid={"ND": [1]}, executor="ray")


@pytest.fixture(scope="module")
def local_rows():
    return serq.sweep(CAPACITY, grid=GRID, replications=REPLICATIONS, horizon=HORIZON)


@pytest.fixture(scope="module")
def ray():
    ray = require_extra("ray")
    # Two workers and the smallest object store Ray accepts (78 MB): what CI
    # can afford. Results are a few kilobytes each.
    ray.init(
        num_cpus=2,
        object_store_memory=78 * 1024 * 1024,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    yield ray
    ray.shutdown()


@pytest.mark.distributed
def test_a_sweep_on_ray_gives_the_local_rows(ray, local_rows):
    rows = serq.sweep(CAPACITY, grid=GRID, replications=REPLICATIONS, horizon=HORIZON, executor="ray")
    assert rows == local_rows
    assert len(rows) == 9


@pytest.mark.distributed
def test_replications_on_ray_give_the_local_row(ray):
    program = serq.compile(REPO / "examples" / "single-turn" / "mm1.sq", horizon=5000)
    assert serq.replicate(program, 4, executor="ray") == serq.replicate(program, 4)


@pytest.mark.distributed
def test_a_sweep_on_dask_gives_the_local_rows(local_rows):
    distributed = require_extra("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        rows = serq.sweep(CAPACITY, grid=GRID, replications=REPLICATIONS, horizon=HORIZON, executor=client)
        program = serq.compile(REPO / "examples" / "single-turn" / "mm1.sq", horizon=5000)
        replicated = serq.replicate(program, 4, executor=client)
    assert rows == local_rows
    assert replicated == serq.replicate(program, 4)


@pytest.mark.distributed
def test_an_arrival_trace_travels_to_ray_workers_by_its_path(ray):
    # The program holds the trace's absolute path; each worker streams the
    # file (a serq extension: `arrive trace`), so the rows are the local ones.
    replay = REPO / "examples" / "traffic" / "azure_replay.sq"
    grid = {"speed": [1, 2]}
    local = serq.sweep(replay, grid=grid, replications=1, horizon=120)
    assert serq.sweep(replay, grid=grid, replications=1, horizon=120, executor="ray") == local
