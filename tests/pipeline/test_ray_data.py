"""Builds on Ray (``dogood.pipeline.ray_data``): actors read, shift and write whole shards; the bytes are a local
build's. (The 2-node cluster without a shared disk: tests/pipeline/test_ray_cluster.py.)"""

from __future__ import annotations

import os
import pickle
import sys
import time

import pytest

ray = pytest.importorskip("ray")

from dogood.core.errors import DogoodError  # noqa: E402
from dogood.pipeline.build import build  # noqa: E402
from dogood.pipeline.ray_data import _read_documents, ensure_ray  # noqa: E402
from dogood.pipeline.recipe import load_recipe, parse_recipe  # noqa: E402
from dogood.pipeline.shards import BuildError  # noqa: E402
from dogood.shifts import params  # noqa: E402
from dogood.shifts.base import SHIFTS, Shift  # noqa: E402
from dogood.sources import open_source  # noqa: E402

NUM_WORKERS = 2
LIMIT = 12


class FailOn(Shift):
    """Fail on one document (a bad page, for the test)."""

    name = "test_fail_on"
    family = "layout"

    class Params(params.Params):
        doc_id: params.Text = ""

    def apply(self, doc, rng):
        if doc.id == self.doc_id:
            raise ValueError(f"bad page {doc.id}")
        return doc


class NoModelAway(Shift):
    """Prepares in the driver's process only: a model that an actor's node lacks."""

    name = "test_no_model_away"
    family = "layout"

    class Params(params.Params):
        driver_pid: params.Integer = 0

    def prepare(self):
        if os.getpid() != self.driver_pid:
            raise DogoodError("the model is not on this node")

    def apply(self, doc, rng):
        return doc


def _recipe(fail_doc: str = ""):
    """FUNSD-L's ``merge``, FUNSD-I's ``distort`` (an image shift), and a config failing on ``fail_doc``."""
    configs = {"merge": load_recipe("funsd-l").configs["merge"], "distort": load_recipe("funsd-i").configs["distort"],
               "fail": [{"shift": "test_fail_on", "doc_id": fail_doc}]}
    return parse_recipe({"name": "funsd-ray", "version": "1.0.0", "source": {"kind": "funsd"}, "splits": ["test"],
                         "seed": 0, "configs": configs})


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray with two CPUs and a 200 MB object store, shut down after this module."""
    if ray.is_initialized():
        ray.shutdown()
    ensure_ray(None, num_cpus=NUM_WORKERS)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # actors cannot import this test module
    yield ray
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    ray.shutdown()


@pytest.fixture(scope="module")
def funsd_ids(funsd_dir):
    return open_source({"kind": "funsd"}, "test", funsd_dir).ids()[:LIMIT]


def _files(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_build_through_ray_is_byte_identical(funsd_dir, funsd_ids, local_ray, tmp_path):
    """FUNSD has no ``read_slice``: the actors load each document by id; a skipped page is listed as locally."""
    recipe = _recipe(fail_doc=funsd_ids[7])
    local, remote = tmp_path / "local" / "out", tmp_path / "ray" / "out"  # same folder name: the card names it
    a_report = build(recipe, local, source_path=funsd_dir, limit=LIMIT, progress=False, on_error="skip")
    b_report = build(recipe, remote, source_path=funsd_dir, limit=LIMIT, progress=False, on_error="skip",
                     ray="local", num_proc=NUM_WORKERS)
    assert b_report.skipped == a_report.skipped == [{"id": funsd_ids[7], "split": "test",
                                                     "reason": f"ValueError: bad page {funsd_ids[7]}"}]
    a, b = _files(local), _files(remote)
    assert list(a) == list(b) and sum(p.suffix == ".parquet" for p in a) == 3 * 3  # 3 configs x 3 shards of 5
    for rel in a:
        assert a[rel] == b[rel], rel
    distorted = [a[p] for p in a if p.parts[:2] == ("data", "distort")]
    assert distorted != [a[p] for p in a if p.parts[:2] == ("data", "fail")]  # the image shift changed bytes


def test_a_failing_document_stops_the_build_and_frees_the_actors(funsd_dir, funsd_ids, local_ray, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(BuildError, match=f"test document '{funsd_ids[2]}' failed: ValueError: bad page"):
        build(_recipe(fail_doc=funsd_ids[2]), out, source_path=funsd_dir, limit=LIMIT, progress=False,
              ray="local", num_proc=NUM_WORKERS)
    assert not out.exists()
    deadline = time.monotonic() + 60
    while ray.available_resources().get("CPU", 0) < NUM_WORKERS and time.monotonic() < deadline:
        time.sleep(0.5)
    assert ray.available_resources().get("CPU", 0) == NUM_WORKERS


def test_each_actor_prepares_the_shifts_itself(funsd_dir, local_ray, tmp_path):
    recipe = parse_recipe({"name": "funsd-away", "version": "1.0.0", "source": {"kind": "funsd"}, "splits": ["test"],
                           "configs": {"away": [{"shift": "test_no_model_away", "driver_pid": os.getpid()}]}})
    build(recipe, tmp_path / "here", source_path=funsd_dir, limit=2, progress=False)  # prepared in this process
    with pytest.raises(DogoodError, match="config 'away', shift 'test_no_model_away': the model is not on this node"):
        build(recipe, tmp_path / "away", source_path=funsd_dir, limit=2, progress=False, ray="local", num_proc=1)


def test_shifts_travel_as_their_parameters():
    """What an actor receives: each shift's parameters, never what ``prepare`` loaded (it prepares itself)."""
    for name, cls in SHIFTS.items():
        try:
            shift = cls()
        except (TypeError, ValueError):
            continue  # a shift with required parameters
        again = pickle.loads(pickle.dumps(shift))
        assert type(again) is cls and again.params() == shift.params(), name
    move = SHIFTS["move"]()
    move._model = object()  # a loaded scorer
    assert pickle.loads(pickle.dumps(move))._model is None
    swap = SHIFTS["embedding_swap"]()
    swap._tools = object()  # loaded vectors
    assert not hasattr(pickle.loads(pickle.dumps(swap)), "_tools")


class _Sliced:
    """A source whose ``read_slice`` fails on the document at position 2 (a malformed row)."""

    def __init__(self, funsd):
        self.funsd = funsd

    def read_slice(self, start, stop):
        for i in range(start, stop):
            if i == 2:
                raise DogoodError("malformed row")
            yield self.funsd.load(self.funsd.ids()[i])


def test_read_slice_is_used_and_a_failing_row_is_loaded_alone(funsd_test):
    ids = funsd_test.ids()[:5]
    tasks = [("test", i, doc_id) for i, doc_id in enumerate(ids)]
    got = list(_read_documents(_Sliced(funsd_test), tasks[1:]))
    assert [task for task, _ in got] == tasks[1:]
    assert [doc is None for _, doc in got] == [False, True, False, False]  # position 2: load() names the error
    assert [doc.id for _, doc in got if doc is not None] == [ids[1], ids[3], ids[4]]
    assert [doc for _, doc in _read_documents(funsd_test, tasks)] == [None] * 5  # no read_slice: load by id


def test_without_ray_the_error_says_what_to_install(monkeypatch):
    from dogood.pipeline import ray_data

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(DogoodError, match=r'pip install "dogood\[distributed\]"'):
        ray_data._import_ray()
