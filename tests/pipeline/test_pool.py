"""The local pool (:mod:`dogood.pipeline.pool`): units of a document and a group of configs when documents are few,
merged back per document; the same bytes, previews and card as one process; workers that do not fight over cores."""

from __future__ import annotations

import multiprocessing

import pytest

from dogood.pipeline import pool
from dogood.pipeline.build import build
from dogood.pipeline.cpu_costs import config_ms
from dogood.pipeline.recipe import load_recipe, parse_recipe
from dogood.pipeline.worker import TaskResult
from dogood.shifts import params
from dogood.shifts.base import Shift


class FailOnIn(Shift):
    """Fails on one document (a bad page for one config only, for the test)."""

    name = "test_pool_fail_on"
    family = "layout"

    class Params(params.Params):
        doc_id: params.Text = ""

    def apply(self, doc, rng):
        if doc.id == self.doc_id:
            raise ValueError(f"bad page {doc.id}")
        return doc


def test_groups_balance_the_configs_costliest_first_in_recipe_order():
    costs = {"a": 10.0, "b": 100.0, "c": 40.0, "d": 60.0, "e": 5.0, "f": 45.0}
    groups = pool.config_groups(costs, documents=4, num_proc=2, read_ms=0.5)  # wants ceil(16 * 2 / 4) = 8 units
    assert sorted(c for g in groups for c in g) == sorted(costs)  # every config once
    assert len(groups) == 6  # no more groups than configs
    groups = pool.config_groups(costs, documents=10, num_proc=2, read_ms=0.5)  # ceil(32 / 10) = 4 groups
    assert groups == (("b",), ("d",), ("a", "c"), ("e", "f"))
    loads = [sum(costs[c] for c in g) for g in groups]
    assert loads == sorted(loads, reverse=True)  # the costliest group is handed out first
    assert max(loads) - min(loads) <= max(costs.values())  # longest processing time first: balanced
    for g in groups:
        assert list(g) == sorted(g, key=list(costs).index)  # each group in the recipe's order


@pytest.mark.parametrize("documents, num_proc, read_ms", [(200, 2, 0.5), (4, 1, 0.5), (4, 16, 100.0)])
def test_no_groups_when_documents_suffice_or_reading_would_dominate(documents, num_proc, read_ms):
    costs = {"a": 10.0, "b": 100.0, "c": 40.0}
    # 200 documents fill 2 workers; one process needs none; a page as dear to read as the configs to shift
    assert pool.config_groups(costs, documents, num_proc, read_ms) == ()


def test_config_costs_follow_the_benchmarks():
    rotate, merge = [{"shift": "rotate"}], load_recipe("funsd-l").chain("merge")  # a recipe's entries, or shifts
    assert config_ms(rotate) > 5 * config_ms(merge)
    assert config_ms(merge, copies=3) == pytest.approx(3 * config_ms(merge))


def test_units_merge_into_the_document_s_result():
    a = TaskResult("test", 3, "doc", {"x": ("tx", [{"n": 1}])}, None, (1, 0.5), {"x": b"jpg"}, [{"what": "task"}])
    b = TaskResult("test", 3, "doc", {"y": ("ty", [{"n": 2}])}, None, (2, 1.0), None, None)
    merged = pool.merge_units([a, b])
    assert merged.rows == {"x": ("tx", [{"n": 1}]), "y": ("ty", [{"n": 2}])} and merged.error is None
    assert merged.ocr == (3, 1.5) and merged.previews == {"x": b"jpg"} and merged.spans == [{"what": "task"}]
    failed = pool.merge_units([a, b._replace(rows=None, error=("ValueError: bad", "trace"))])
    assert failed.rows is None and failed.error == ("ValueError: bad", "trace")  # the whole document fails


def _grouped_recipe(fail_doc: str = ""):
    """Few documents and configs of very different costs: a pool of two hands out groups of configs."""
    configs = {"merge": load_recipe("funsd-l").configs["merge"], "rotation": [{"shift": "rotate"}],
               "defocus": [{"shift": "defocus"}], "keystoning": [{"shift": "distort", "kinds": ["perspective"]}],
               "fail": [{"shift": "test_pool_fail_on", "doc_id": fail_doc}]}
    return parse_recipe({"name": "funsd-grouped", "version": "1.0.0", "source": {"kind": "funsd"},
                         "splits": ["test"], "seed": 0, "configs": configs})


def _files(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_grouped_build_is_byte_identical_to_one_process_previews_and_card_too(funsd_dir, funsd_test, tmp_path):
    ids = funsd_test.ids()[:4]
    recipe = _grouped_recipe(fail_doc=ids[2])
    plan_groups = pool.config_groups({c: config_ms(recipe.chain(c)) for c in recipe.configs}, 4, 2, 0.5)
    assert len(plan_groups) > 1  # the pool below does hand out groups of configs
    one, two = tmp_path / "one" / "out", tmp_path / "two" / "out"  # same folder name: the card names it
    a_report = build(recipe, one, source_path=funsd_dir, limit=4, progress=False, on_error="skip")
    b_report = build(recipe, two, source_path=funsd_dir, limit=4, progress=False, on_error="skip", num_proc=2)
    # the page failing in one config is left out of every config, as with one process
    assert b_report.skipped == a_report.skipped == [{"id": ids[2], "split": "test",
                                                     "reason": f"ValueError: bad page {ids[2]}"}]
    a, b = _files(one), _files(two)
    assert list(a) == list(b) and {p.name for p in a if p.parts[0] == "previews"} == {
        f"{c}.jpg" for c in recipe.configs}
    for rel in a:
        assert a[rel] == b[rel], rel
    import datasets

    assert datasets.load_dataset(str(two), "rotation", split="test")["id"] == [ids[0], ids[1], ids[3]]


def test_previews_are_drawn_here_when_the_first_page_is_skipped(funsd_dir, funsd_test, tmp_path):
    ids = funsd_test.ids()[:3]
    recipe = _grouped_recipe(fail_doc=ids[0])
    one, two = tmp_path / "one" / "out", tmp_path / "two" / "out"
    build(recipe, one, source_path=funsd_dir, limit=3, progress=False, on_error="skip")
    build(recipe, two, source_path=funsd_dir, limit=3, progress=False, on_error="skip", num_proc=2)
    for config in recipe.configs:
        rel = f"previews/{config}.jpg"
        assert (one / rel).read_bytes() == (two / rel).read_bytes()  # of the second page, drawn by the driver


def _thread_counts(_):
    import cv2
    from threadpoolctl import threadpool_info

    return cv2.getNumThreads(), {i["user_api"]: i["num_threads"] for i in threadpool_info()}


def test_forked_workers_run_one_thread_per_library_and_the_driver_keeps_its_own():
    import cv2

    before = cv2.getNumThreads()
    ctx = multiprocessing.get_context("fork")
    with pool.capped_threads():
        workers = ctx.Pool(2)
    with workers:
        counts = workers.map(_thread_counts, range(2))
    assert cv2.getNumThreads() == before
    for cv_threads, apis in counts:
        assert cv_threads == 1 and all(n == 1 for n in apis.values())


def test_numba_gets_a_layer_that_forks_safely_before_its_threads_start(monkeypatch):
    numba = pytest.importorskip("numba")
    try:
        numba.threading_layer()
    except ValueError:  # no parallel loop ran in this process yet
        monkeypatch.setattr(numba.config, "THREADING_LAYER", "default")
        assert pool.start_method() == "fork" and numba.config.THREADING_LAYER == "workqueue"
    else:
        pytest.skip("a parallel loop already ran in this process")


def test_after_gnu_openmp_ran_workers_start_from_a_fork_server(monkeypatch):
    import types

    fake = types.SimpleNamespace(threading_layer=lambda: "omp", config=types.SimpleNamespace(THREADING_LAYER="omp"))
    monkeypatch.setitem(__import__("sys").modules, "numba", fake)
    assert pool.start_method() == "forkserver"
    fake.threading_layer = lambda: "workqueue"
    assert pool.start_method() == "fork"


class PreparesNowhereElse(Shift):
    """Prepares in the driver only (a model a worker cannot load), for the test."""

    name = "test_pool_prepares_here_only"
    family = "layout"

    class Params(params.Params):
        driver_pid: params.Integer = 0

    def prepare(self):
        import os

        if os.getpid() != self.driver_pid:
            raise RuntimeError("no model in this process")

    def apply(self, doc, rng):
        return doc


def test_a_worker_that_cannot_start_stops_the_build_naming_why(funsd_dir, tmp_path):
    """A pool respawns a worker whose initialiser raises, forever: dogood's worker reports it with its first task."""
    import os

    from dogood.core.errors import DogoodError

    recipe = parse_recipe({"name": "funsd-nowhere", "version": "1.0.0", "source": {"kind": "funsd"},
                           "splits": ["test"], "configs": {"here": [{"shift": "test_pool_prepares_here_only",
                                                                      "driver_pid": os.getpid()}]}})
    with pytest.raises(DogoodError, match="a worker process could not start: RuntimeError: no model in this process"):
        build(recipe, tmp_path / "out", source_path=funsd_dir, limit=2, num_proc=2, progress=False)
    assert not (tmp_path / "out").exists()


def test_a_failing_page_stops_a_pool_build_in_one_error_no_thread_traceback(funsd_dir, funsd_test, tmp_path, capfd):
    ids = funsd_test.ids()[:8]
    recipe = _grouped_recipe(fail_doc=ids[1])
    out = tmp_path / "out"
    with pytest.raises(Exception, match=ids[1]):
        build(recipe, out, source_path=funsd_dir, limit=8, progress=False, on_error="raise", num_proc=2)
    assert not out.exists()  # nothing half-written where the user looks
    assert "Traceback" not in capfd.readouterr().err  # the feeder thread and the workers stop quietly
