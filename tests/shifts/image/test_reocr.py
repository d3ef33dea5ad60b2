"""Re-OCR after an image shift: Tesseract's words replace the source's, entity labels follow them."""

from __future__ import annotations

import numpy as np
import pytest

from dogood.core.document import Document, Entity, PageImage, Word
from dogood.shifts import ReOCR
from dogood.shifts.image.reocr import transfer_owners


def test_transfer_owners_by_covered_area():
    old = np.array([[0, 0, 10, 10], [20, 0, 40, 10], [100, 100, 110, 110]])
    new = np.array([[1, 1, 9, 9], [18, 0, 38, 10], [50, 50, 60, 60], [5, 0, 25, 10]])
    # 1st inside old 0; 2nd 18/20 covered by old 1; 3rd nothing; 4th a quarter by old 0, a quarter by old 1
    assert transfer_owners(old, new, 0.5).tolist() == [0, 1, -1, -1]
    assert transfer_owners(old, new, 0.25).tolist() == [0, 1, -1, 0]
    assert transfer_owners(old[:0], new, 0.5).tolist() == [-1, -1, -1, -1]
    # grouped (old 0 and 1 are one entity): the 4th is covered half by the group
    assert transfer_owners(old, new, 0.5, np.array([0, 0, 1])).tolist() == [0, 0, -1, 0]
    assert transfer_owners(old, new, 0.5, np.array([-1, -1, -1])).tolist() == [-1, -1, -1, -1]


@pytest.fixture(scope="module")
def page(funsd_test):
    return funsd_test.load(funsd_test.ids()[0])


def test_reocr_reads_the_page_and_labels_follow_the_words(page):
    out = ReOCR()(page, 0)
    counts = out.provenance[-1].counts
    assert counts["words_before"] == len(page.words)
    assert counts["words_after"] == len(out.words) > 0.5 * len(page.words)
    assert counts["labelled"] + counts["unlabelled"] == len(out.words)
    assert counts["labelled"] > 0.8 * len(out.words)
    # each labelled OCR word lies mostly on an old word of the same entity (same label)
    old_boxes = page.boxes
    new_entity = out.word_entity()
    old_entity = page.word_entity()
    group = np.array([page.entities.index(e) if e is not None else -1 for e in old_entity])
    owners = transfer_owners(old_boxes, out.boxes, 0.5, group)
    for i, ent in enumerate(new_entity):
        if ent is None:
            assert owners[i] < 0
        else:
            assert (page.entities[owners[i]].id, page.entities[owners[i]].label) == (ent.id, ent.label)
            # the entity's annotated words cover at least half of the OCR word
            x0, y0, x1, y1 = out.words[i].box
            covered = sum(max(0, min(x1, b[2]) - max(x0, b[0])) * max(0, min(y1, b[3]) - max(y0, b[1]))
                          for b in old_boxes[list(page.entities[owners[i]].word_ids)])
            assert covered >= 0.5 * max((x1 - x0) * (y1 - y0), 1)
    assert [(e.id, e.label, e.links) for e in out.entities] == [(e.id, e.label, e.links) for e in page.entities]
    assert out.image is page.image and out.label == page.label
    # most OCR words are words of the entity they join
    texts = [{page.words[j].text.lower() for j in page.entities[o].word_ids} for o in owners.tolist() if o >= 0]
    ocr = [out.words[i].text.lower() for i, o in enumerate(owners.tolist()) if o >= 0]
    assert sum(t in s for t, s in zip(ocr, texts)) > 0.5 * len(ocr)


def test_reocr_on_a_blank_page_leaves_no_words():
    doc = Document(
        id="blank",
        image=PageImage.from_array(np.full((200, 300), 255, np.uint8)),
        words=[Word("lost", (10, 10, 50, 30))],
        entities=[Entity(0, "answer", [0])],
    )
    out = ReOCR()(doc, 0)
    assert out.words == () and out.entities[0].word_ids == ()
    assert out.provenance[-1].counts["entities_lost"] == 1
