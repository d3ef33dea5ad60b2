"""Builds on Ray Data (``dogood.pipeline.ray_data``): the same tuples, in the same order, as the local build."""

from __future__ import annotations

import sys
import time

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

from dogood.build import build  # noqa: E402
from dogood.pipeline.pool import run_pool  # noqa: E402
from dogood.pipeline.ray_data import ensure_ray, run_ray  # noqa: E402
from dogood.pipeline.worker import WorkerSpec  # noqa: E402
from dogood.errors import DogoodError  # noqa: E402
from dogood.recipe import load_recipe, parse_recipe  # noqa: E402
from dogood.shifts.base import Shift  # noqa: E402
from dogood.shifts import params  # noqa: E402
from dogood.sources import open_source  # noqa: E402

NUM_WORKERS = 2
LIMIT = 12
BAD_ID = "no-such-form"


class SlowFirst(Shift):
    """Sleep on one document, so that the documents after it finish first on the other actor."""

    name = "test_slow_first"
    family = "layout"

    class Params(params.Params):
        doc_id: params.Text = ""
        seconds: params.Real = 2.0

    def apply(self, doc, rng):
        if doc.id == self.doc_id:
            time.sleep(self.seconds)
        return doc


def _recipe():
    """FUNSD-L's ``merge`` and FUNSD-I's ``distort`` (an image shift) in one recipe."""
    configs = {"merge": load_recipe("funsd-l").configs["merge"], "distort": load_recipe("funsd-i").configs["distort"]}
    return parse_recipe({"name": "funsd-ray", "version": "1.0.0", "source": {"kind": "funsd"}, "splits": ["test"],
                         "seed": 0, "configs": configs})


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray with two CPUs and a 200 MB object store, shut down after this module."""
    ensure_ray(None, num_cpus=NUM_WORKERS)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def inputs(funsd_dir):
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # actors cannot import this test module
    recipe = _recipe()
    sources = {"test": open_source(recipe.source, "test", funsd_dir)}
    ids = sources["test"].ids()[:LIMIT]
    chains = {name: recipe.chain(name) for name in recipe.configs}
    chains["slow"] = [SlowFirst(doc_id=ids[0])]  # without preserve_order, ids[0] would come back last
    for chain in chains.values():
        for shift in chain:
            shift.prepare()
    ids = ids[:6] + [BAD_ID] + ids[6:]
    tasks = [("test", i, doc_id) for i, doc_id in enumerate(ids)]
    yield tasks, WorkerSpec(sources, chains, recipe.seed, sources["test"].schema, "segment")
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def both(inputs, local_ray):
    """(local results, Ray results) for the same tasks."""
    return list(run_pool(*inputs, 1)), list(run_ray(*inputs, num_workers=NUM_WORKERS))


def test_ray_yields_the_local_tuples_in_task_order(inputs, both):
    tasks = inputs[0]
    local, remote = both
    assert [r[:3] for r in remote] == [tuple(t) for t in tasks]
    assert len(remote) == LIMIT + 1
    for a, b in zip(local, remote):
        assert b == a, a[2]
        if a[3] is not None:
            for config in ("merge", "distort"):
                (row_a, stats_a), = a[3][config]  # one copy: one (row, stats) pair
                (row_b, stats_b), = b[3][config]
                assert row_b["image"] == row_a["image"]  # embedded image bytes
                assert stats_b == stats_a  # stats, Counters included
    distorted = [r[3]["distort"][0][0]["image"] != r[3]["slow"][0][0]["image"] for r in local if r[3] is not None]
    assert all(distorted)  # the image shift did change pixels, so image bytes were really compared


def test_a_failing_document_comes_back_as_its_error_tuple(both):
    local, remote = both
    [bad] = [r for r in remote if r[2] == BAD_ID]
    [expected] = [r for r in local if r[2] == BAD_ID]
    assert bad == expected
    assert bad[3] is None and BAD_ID in bad[4][0]


def test_a_build_through_ray_is_byte_identical(funsd_dir, local_ray, tmp_path, monkeypatch):
    recipe = _recipe()
    local, remote = tmp_path / "local" / "out", tmp_path / "ray" / "out"  # same folder name: the card names it
    build(recipe, local, source_path=funsd_dir, limit=LIMIT, progress=False)

    build(recipe, remote, source_path=funsd_dir, limit=LIMIT, progress=False, ray="local",
          num_proc=NUM_WORKERS)
    a = sorted(p.relative_to(local) for p in local.rglob("*") if p.is_file())
    b = sorted(p.relative_to(remote) for p in remote.rglob("*") if p.is_file())
    assert a == b and any(p.suffix == ".parquet" for p in a)
    for rel in a:
        assert (local / rel).read_bytes() == (remote / rel).read_bytes(), rel


def test_stopping_early_releases_the_actors(inputs, local_ray):
    tasks, spec = inputs
    results = run_ray(tasks[1:6], spec, num_workers=NUM_WORKERS)
    assert next(results)[2] == tasks[1][2]
    results.close()
    deadline = time.monotonic() + 60
    while ray.available_resources().get("CPU", 0) < NUM_WORKERS and time.monotonic() < deadline:
        time.sleep(0.5)
    assert ray.available_resources().get("CPU", 0) == NUM_WORKERS


def test_without_ray_the_error_says_what_to_install(monkeypatch):
    from dogood.pipeline import ray_data

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(DogoodError, match=r"pip install 'ray\[data\]'"):
        ray_data._import_ray()
