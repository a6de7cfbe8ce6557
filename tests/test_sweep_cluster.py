"""egmbook.sweep on a dask cluster (the cluster extra): a smoke test on a local cluster.

* A local cluster of two worker processes (dask.distributed's LocalCluster) writes the
  same summaries, byte for byte, and the same run log, row for row, as joblib's two loky
  workers on a tiny slice (GaussianA at d = 16, 3 runs, two budgets, three arms).
* A worker that joins while a sweep runs takes tasks: the tasks wait in the scheduler's
  queue, not in a window sized when the sweep started.
* A worker whose code differs from the client's (its egmlib, egmbook, numpy or scipy) stops
  the sweep before any task runs, and a task on such a worker refuses to run.

The tests share one local cluster (starting a worker process costs seconds of CPU), each
scaling it to the number of workers it needs, so that they pass in any order.
"""

from __future__ import annotations

import csv
import time

import pytest

pytest.importorskip("joblib")
pytest.importorskip("tqdm")
distributed = pytest.importorskip("distributed", reason="the cluster extra (pip install -e .[cluster])")

from egmbook import sweep as ps  # noqa: E402

ARMS = ("PLAN", "IOME", "empirical")
RHOS = (1 / 16, 1.0)
SLICE = dict(arms=ARMS, runs=3, datasets=["GaussianA"], max_d=16, rhos=RHOS, progress=False)


def _cluster(n_workers: int) -> distributed.LocalCluster:
    return distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                    dashboard_address=":0", silence_logs=40)


def _workers(client: distributed.Client, n: int) -> None:
    """Scale the client's cluster to ``n`` worker processes and wait until it has exactly ``n``."""
    client.cluster.scale(n)
    deadline = time.monotonic() + 120
    while len(client.scheduler_info()["workers"]) != n:
        assert time.monotonic() < deadline, f"the cluster did not reach {n} workers in 120 s"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def cluster():
    """One local cluster for the whole file (each worker process costs seconds of CPU to start):
    it starts with one worker, the number the late-joining worker's test starts from, and
    each test scales it to the number it needs."""
    with _cluster(1) as c:
        yield c


@pytest.fixture
def client(cluster):
    """A client of the file's cluster, scaled to two workers."""
    with distributed.Client(cluster) as c:
        _workers(c, 2)
        yield c


def _log(path):
    with (path / "peers_runs.csv").open(newline="") as f:
        return sorted(tuple(v for k, v in r.items() if k != "cpu_s") for r in csv.DictReader(f))


@pytest.mark.slow
def test_a_worker_that_joins_later_takes_tasks(cluster):
    # first in the file: the cluster still has the one worker it started with, and leaves
    # this test with the two the other tests use
    tasks = [ps.Task("gaussian", "GaussianA", 4, run, ("PLAN", "IOME"), ps.RHOS) for run in range(24)]
    with distributed.Client(cluster) as c:
        _workers(c, 1)
        first = c.scheduler_info()["workers"]
        stream = ps._cluster_results(tasks, c, progress=False)
        with distributed.get_task_stream(client=c) as ts:
            with pytest.warns(UserWarning, match="one worker thread: the sweep runs serially"):
                done = [next(stream)]
            queued = c.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.queued))
            cluster.scale(2)
            c.wait_for_workers(2, timeout=120)
            done += list(stream)
        assert queued > 0  # the tasks wait on the scheduler, for whichever worker frees first
        assert sorted(t.run for t, _ in done) == list(range(24))
        late = set(c.scheduler_info()["workers"]) - set(first)
        ran_on = {r["worker"] for r in ts.data}
        assert late and late <= ran_on, (late, ran_on)


def test_two_dask_workers_write_what_joblib_writes(client, tmp_path):
    on_dask, on_joblib = tmp_path / "dask", tmp_path / "joblib"
    on_dask.mkdir()
    on_joblib.mkdir()
    r_dask = ps.run_sweep("gaussian", **SLICE, scheduler=client, results=on_dask)
    r_joblib = ps.run_sweep("gaussian", **SLICE, jobs=2, results=on_joblib)
    assert r_dask["tasks"] == r_joblib["tasks"] == 3
    for name in ("peers.csv", "peers_excess.csv", "peers_privacy.csv"):
        assert (on_dask / name).read_bytes() == (on_joblib / name).read_bytes(), name
    rows = _log(on_dask)
    assert rows == _log(on_joblib)
    assert len(rows) == 3 * len(ARMS) * len(RHOS)
    # both workers ran tasks, none ran on the client (the log's rows came back from them)
    assert ps.run_sweep("gaussian", **SLICE, scheduler=client, results=on_dask)["tasks"] == 0


def test_a_worker_with_other_code_is_refused(client, tmp_path):
    # the worker imports egmbook.sweep here if no earlier task has (this test alone, or first)
    def poison():
        import importlib

        m = importlib.import_module("egmbook.sweep")
        m._true_fingerprint = m.code_fingerprint
        m.code_fingerprint = lambda: (("egmlib", "other"),) + m._true_fingerprint()[1:]

    def cure():
        import importlib

        m = importlib.import_module("egmbook.sweep")
        m.code_fingerprint = m._true_fingerprint

    worker = sorted(client.scheduler_info()["workers"])[0]
    client.run(poison, workers=[worker])
    try:
        with pytest.raises(RuntimeError, match=r"runs other code than the client: egmlib other"):
            ps.run_sweep("gaussian", **SLICE, scheduler=client, results=tmp_path)
        # a task that reaches such a worker anyway (one that joined after the check) refuses to run
        task = ps.Task("gaussian", "GaussianA", 0, 0, ("empirical",), (1.0,))
        fut = client.submit(ps._run_on_worker, task, ps.code_fingerprint(), workers=[worker], pure=False)
        with pytest.raises(RuntimeError, match="this worker runs other code"):
            fut.result()
    finally:
        client.run(cure, workers=[worker])
    assert not (tmp_path / "peers_runs.csv").exists() or _log(tmp_path) == []
