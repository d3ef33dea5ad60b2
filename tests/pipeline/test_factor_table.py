"""The card's factor table in the user's convention (issue 39 part 5): box position and size measured on the
``bboxes`` column as built, the record's word-level share beside it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dogood.core.document import Document, Entity, PageImage, Word
from dogood.measures.factors import Comparison, column_factors
from dogood.pipeline.factor_table import cell_text


def _page(boxes, entities):
    return Document("p", PageImage.from_array(np.full((100, 200), 255, np.uint8)),
                    words=tuple(Word(f"w{k}", b) for k, b in enumerate(boxes)), entities=tuple(entities))


def test_column_factors_by_hand():
    """Two words of one entity: merged together at segment level, a move inside the entity's box changes nothing
    in the column; the word level sees it."""
    before = _page([(10, 10, 30, 20), (40, 10, 60, 20)], [Entity(0, "question", (0, 1))])
    after = _page([(10, 10, 30, 20), (45, 10, 60, 20)], [Entity(0, "question", (0, 1))])
    c = Comparison(before, after)
    segment0 = [[50, 100, 300, 200]] * 2  # the entity's box, normalised, for both tokens
    assert column_factors(c, segment0, segment0) == {"box_position": {"changed": 0, "of": 2},
                                                     "box_size": {"changed": 0, "of": 2}}
    word0, word1 = [[50, 100, 150, 200], [200, 100, 300, 200]], [[50, 100, 150, 200], [225, 100, 300, 200]]
    # the second box: centre +12.5 units, area 75/100 of before (beyond 10%)
    assert column_factors(c, word0, word1) == {"box_position": {"changed": 1, "of": 2},
                                               "box_size": {"changed": 1, "of": 2}}


def test_cells_show_the_column_first_and_the_record_beside():
    cell = {"factor": "box_position", "share": 0.921, "declared": True, "beyond": True, "column": 0.246}
    assert cell_text(cell) == "24.6% ✓ (record 92.1%)"
    assert cell_text({**cell, "declared": False}) == "**24.6% ⚠ (record 92.1%)**"
    assert cell_text({k: v for k, v in cell.items() if k != "column"}) == "92.1% ✓"  # builds before the column


@pytest.mark.parametrize("level", ["segment", "word"])
def test_the_card_states_the_share_a_reader_of_bboxes_sees(funsd_dir, funsd_test, tmp_path, level):
    """merge at segment level: most words' own boxes grow, yet the column changes only where an entity's box grew;
    the card's share is the one counted here from the source's and the built rows' bboxes."""
    import pyarrow.parquet as pq

    from dogood.core.schema import document_to_row
    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import load_recipe

    out = tmp_path / "fl"
    build(load_recipe("funsd-l"), out, source_path=funsd_dir, limit=3, configs=["merge_x0_y0"], box_level=level,
          progress=False)
    rows = pq.read_table(next((out / "data" / "merge_x0_y0").glob("test-*.parquet"))).to_pylist()
    moved = total = 0
    for row in rows:
        before = np.array(document_to_row(funsd_test.load(row["id"]), "funsd", level, image=False)["bboxes"])
        after = np.array(row["bboxes"])
        assert before.shape == after.shape  # merge keeps every word in place
        moved += int((np.abs((after[:, :2] + after[:, 2:]) - (before[:, :2] + before[:, 2:])) >= 2).any(axis=1).sum())
        total += len(after)
    record = json.loads((out / "dogood_build.json").read_text())
    column = record["stats"]["merge_x0_y0"]["test"]["factors"]["bboxes"]["box_position"]
    assert column == {"changed": moved, "of": total}
    card = (out / "README.md").read_text()
    line = next(x for x in card.splitlines() if x.startswith("| `merge_x0_y0` |"))
    assert f"| {100 * moved / total:.1f}% ✓ (record " in line
    assert f"first in the `bboxes` column as built ({level} level" in card
    if level == "segment":
        share = record["stats"]["merge_x0_y0"]["test"]["factors"]["box_position"]
        assert moved / total < share["changed"] / share["of"]  # the record's word boxes change more
