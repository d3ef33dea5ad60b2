"""The synthetic source: pages fixed by (seed, split, index), boxes exactly around their ink, ids computed."""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dogood.core.errors import DocumentError, RecipeError, SourceError
from dogood.core.schema import RVL_CDIP_CLASSES, document_to_row
from dogood.pipeline.build import build
from dogood.pipeline.recipe import parse_recipe
from dogood.sources import open_source, synthetic
from dogood.sources.synthetic import PageIds, SyntheticSource, render_page


def same_document(a, b) -> bool:
    return (a.id, a.words, a.entities, a.label, a.qa) == (b.id, b.words, b.entities, b.label, b.qa) and np.array_equal(
        a.image.to_array(), b.image.to_array()
    ) and a.image.encoded_bytes() == b.image.encoded_bytes()


def test_opens_through_open_source_with_the_recipe_spec():
    source = open_source({"kind": "synthetic", "pages": 12, "size": [754, 1000], "seed": 0}, "test")
    assert isinstance(source, SyntheticSource)
    assert (source.kind, source.split, source.schema) == ("synthetic", "test", "rvl_cdip")
    doc = source.load(source.ids()[0])
    assert (doc.width, doc.height) == (754, 1000)
    assert doc.image.to_array().shape == (1000, 754) and doc.image.to_array().dtype == np.uint8
    assert doc.label in RVL_CDIP_CLASSES
    assert 150 <= len(doc.words) <= 250
    info = source.describe()
    assert info["kind"] == "synthetic" and info["pages"] == 12 and info["size"] == [754, 1000]
    with pytest.raises(RecipeError, match="reads no files"):
        open_source({"kind": "synthetic"}, "test", "/some/folder")
    for bad in ({"pages": -1}, {"size": [754]}, {"words": [30, 10]}, {"schema": "coco"}, {"encoding": "gif"}):
        with pytest.raises(SourceError):
            open_source({"kind": "synthetic", **bad}, "test")


def test_pages_depend_only_on_seed_split_and_index():
    a = SyntheticSource(pages=50, seed=7)
    b = SyntheticSource(pages=50, seed=7)
    ids = a.ids()
    forward = [a.load(i) for i in ids[:4]]
    synthetic._cached_sprite.cache_clear()  # a cold cache of word images changes nothing
    backward = [b.load(i) for i in reversed(ids[:4])][::-1]
    assert all(same_document(x, y) for x, y in zip(forward, backward))
    # in another process's order and state: pickled sources give the same pages
    c = pickle.loads(pickle.dumps(a))
    assert same_document(c.load(ids[3]), forward[3])
    other_seed = SyntheticSource(pages=50, seed=8).load(ids[0])
    other_split = SyntheticSource(pages=50, seed=7, split="train").load("train-00000")
    assert not np.array_equal(other_seed.image.to_array(), forward[0].image.to_array())
    assert not np.array_equal(other_split.image.to_array(), forward[0].image.to_array())
    assert len({tuple(w.text for w in d.words) for d in forward}) == 4  # different pages
    # a page does not depend on how many pages the split has
    assert same_document(SyntheticSource(pages=5, seed=7).load("test-00003"), forward[3])


@pytest.mark.parametrize("index", [0, 1, 2, 3, 4, 5])
def test_boxes_enclose_exactly_their_rendered_ink(index):
    page = render_page(0, "test", index)
    blank = render_page(0, "test", index, text=False)
    assert page.words == blank.words and page.label == blank.label
    ink = page.pixels != blank.pixels  # every pixel the text changed
    covered = np.zeros_like(ink)
    for w in page.words:
        x0, y0, x1, y1 = w.box
        assert 0 <= x0 < x1 <= 754 and 0 <= y0 < y1 <= 1000
        box = ink[y0:y1, x0:x1]
        # tight: ink on each of the box's four edges
        assert box[0].any() and box[-1].any() and box[:, 0].any() and box[:, -1].any(), w
        assert not covered[y0:y1, x0:x1].any(), f"{w} overlaps another word"
        covered[y0:y1, x0:x1] = True
    assert not (ink & ~covered).any()  # no ink outside the boxes
    assert (page.pixels[ink] < blank.pixels[ink]).all()  # ink is darker than the paper under it


def test_ids_are_computed_and_count_the_pages():
    source = SyntheticSource(pages=1000)
    ids = source.ids()
    assert isinstance(ids, PageIds) and len(ids) == 1000
    listed = list(ids)
    assert len(set(listed)) == 1000 and listed == sorted(listed)
    assert listed[:2] == ["test-00000", "test-00001"] and ids[-1] == "test-00999"
    assert list(ids[:3]) == listed[:3] and len(ids[10:20]) == 10 and ids[10:20][0] == "test-00010"
    assert "test-00999" in ids and "test-01000" not in ids and ids.index("test-00042") == 42
    assert list(SyntheticSource(pages=0).ids()) == []
    huge = SyntheticSource(pages=10**9).ids()  # nothing is stored per page
    assert len(huge) == 10**9 and huge[-1] == "test-999999999"
    assert sys.getsizeof(huge) < 1000 and len(pickle.dumps(huge)) < 1000
    doc = SyntheticSource(pages=10**9).load(huge[-1])
    assert doc.id == "test-999999999" and doc.words
    with pytest.raises(DocumentError, match="not a page"):
        source.load("test-01000")
    with pytest.raises(DocumentError):
        source.load("train-00001")


def test_entities_and_questions_fit_the_funsd_and_docvqa_schemas():
    source = SyntheticSource(pages=20, schema="funsd")
    assert source.entities
    labels = set()
    for doc_id in source.ids()[:8]:
        doc = source.load(doc_id)
        labels |= {e.label for e in doc.entities}
        owned = sorted(i for e in doc.entities for i in e.word_ids)
        assert owned == list(range(len(doc.words)))  # every word in exactly one entity
        by_id = {e.id: e for e in doc.entities}
        for e in doc.entities:
            for q, a in e.links:
                assert by_id[q].label == "question" and by_id[a].label == "answer"
        row = document_to_row(doc, "funsd")
        assert len(row["tokens"]) == len(doc.words)
    assert labels == {"header", "question", "answer", "other"}
    qa_source = SyntheticSource(pages=20, schema="docvqa", questions=3)
    doc = qa_source.load(qa_source.ids()[0])
    assert len(doc.qa) == 3
    text = " ".join(w.text for w in doc.words)
    assert all(answer in text for q in doc.qa for answer in q.answers)
    assert document_to_row(doc, "docvqa")["questions"][0]["answers"]
    assert not SyntheticSource(pages=2).load("test-00000").entities  # off by default


def test_builds_the_same_bytes_with_any_number_of_workers(tmp_path):
    recipe = parse_recipe({"name": "synthetic-smoke", "version": "1.0.0",
                           "source": {"kind": "synthetic", "pages": 6, "seed": 1},
                           "configs": {"original": [], "merge": [{"shift": "merge", "lambda_x": 10, "lambda_y": 5}]}})
    outs = []
    for num_proc in (1, 2):
        out = tmp_path / f"out{num_proc}"
        report = build(recipe, out, num_proc=num_proc, progress=False)
        assert report.documents == {"test": 6}
        outs.append(sorted(out.glob("data/*/*.parquet")))
    assert [p.read_bytes() for p in outs[0]] == [p.read_bytes() for p in outs[1]]
    table = pa.concat_tables([pq.read_table(f) for f in outs[0] if f.parent.name == "original"])
    assert table.num_rows == 6
    source = SyntheticSource(pages=6, seed=1)
    first = source.load(source.ids()[0])
    assert table.column("image")[0].as_py()["bytes"] == first.image.encoded_bytes()  # unshifted pages are copied
    assert RVL_CDIP_CLASSES[table.column("label")[0].as_py()] == first.label
