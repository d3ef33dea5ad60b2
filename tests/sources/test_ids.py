"""Document ids streamed through a build: ``--limit`` as a view, the resume key's ids hash fed one id at a time
(the digest of the joined ids, as before), shards as id ranges whose tasks are made on demand."""

from __future__ import annotations

import hashlib

import pyarrow.parquet as pq

from dogood.pipeline.plan import plan_build
from dogood.pipeline.recipe import parse_recipe
from dogood.pipeline.shards import ShardTasks, list_shards
from dogood.sources.ids import IdsView, first_ids, ids_sha256
from dogood.sources.synthetic import PageIds


def synthetic_recipe(pages: int, shard_size: int | None = None):
    return parse_recipe({
        "name": "synthetic-noop", "version": "1.0.0", **({"shard_size": shard_size} if shard_size else {}),
        "source": {"kind": "synthetic", "pages": pages, "size": [64, 64], "words": [0, 2], "seed": 0},
        "splits": ["test"], "seed": 0, "configs": {"noop": []},
    })


def test_views_and_the_streamed_hash():
    ids = [f"doc-{i}" for i in range(10)]
    view = first_ids(ids, 4)
    assert isinstance(view, IdsView) and view.base is ids and list(view) == ids[:4] and view[-1] == "doc-3"
    assert list(view[1:3]) == ["doc-1", "doc-2"] and first_ids(ids, 50) is ids and first_ids(ids, None) is ids
    lazy = PageIds("test", range(1_000_000), 6)
    assert first_ids(lazy, 3) == PageIds("test", range(3), 6)  # the lazy sequence's own slice: nothing stored
    for seq in (ids, view, [], ["only"], ["é", "\udcff"]):
        joined = "\n".join(seq).encode("utf-8", "surrogateescape")
        assert ids_sha256(seq) == hashlib.sha256(joined).hexdigest()  # the key of a work folder left before


def test_limit_plan_key_and_shards_stream(tmp_path):
    plan = plan_build(synthetic_recipe(1_000_000, shard_size=7), tmp_path / "out", source_path=None, seed=None,
                      num_proc=1, limit=20, on_error="raise", configs=None, overwrite=False, box_level=None)
    assert plan.ids["test"] == PageIds("test", range(20), 6)
    assert plan.key()["ids"]["test"] == hashlib.sha256("\n".join(f"test-{i:06d}" for i in range(20)).encode()).hexdigest()
    done, todo = list_shards(plan, tmp_path)
    assert not done and [(s.k, s.start, s.stop) for s in todo] == [(0, 0, 7), (1, 7, 14), (2, 14, 20)]
    tasks = ShardTasks(todo)
    expected = [("test", i, f"test-{i:06d}") for i in range(20)]
    assert len(tasks) == 20 and list(tasks) == expected and [tasks[i] for i in (0, 6, 7, 19, -1)] == \
        [expected[i] for i in (0, 6, 7, 19, -1)]


def test_a_limited_build_of_a_large_lazy_source_writes_the_first_rows(tmp_path):
    from dogood.pipeline.build import build

    report = build(synthetic_recipe(1_000_000, shard_size=4), tmp_path / "out", limit=10, num_proc=2, progress=False)
    assert report.documents == {"test": 10}
    files = sorted((tmp_path / "out" / "data" / "noop").glob("*.parquet"))
    assert len(files) == 3
    assert pq.read_table(files, columns=["id"]).column("id").to_pylist() == [f"test-{i:06d}" for i in range(10)]
