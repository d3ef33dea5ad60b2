"""Word edits keep entities, IOB tags and links consistent with the words."""

from __future__ import annotations

import numpy as np
import pytest

from dogood.core.document import Document, Entity, PageImage, Word
from dogood.core.schema import iob_tags
from dogood.language.edits import box_beside, delete_words, insert_words, reorder_words, replace_texts


def _doc():
    image = PageImage.from_array(np.full((100, 200), 255, np.uint8))
    words = [Word("Name:", (10, 10, 40, 20)), Word("John", (50, 10, 80, 20)), Word("Smith", (85, 10, 120, 20)),
             Word("Date:", (10, 40, 40, 50)), Word("today", (50, 40, 80, 50))]
    entities = [Entity(0, "question", (0,), ((0, 1),)), Entity(1, "answer", (1, 2), ((0, 1),)),
                Entity(2, "question", (3,), ((2, 3),)), Entity(3, "answer", (4,), ((2, 3),))]
    return Document("d", image, tuple(words), tuple(entities))


def test_replace_keeps_boxes_and_tags():
    doc = replace_texts(_doc(), {1: "Jane"})
    assert [w.text for w in doc.words] == ["Name:", "Jane", "Smith", "Date:", "today"]
    assert [w.box for w in doc.words] == [w.box for w in _doc().words]
    assert iob_tags(doc) == iob_tags(_doc())


def test_delete_renumbers_entities_and_drops_emptied_ones_with_their_links():
    doc = delete_words(_doc(), [1, 4])
    assert [w.text for w in doc.words] == ["Name:", "Smith", "Date:"]
    assert iob_tags(doc)[1] == ["B-QUESTION", "B-ANSWER", "B-QUESTION"]
    assert [e.id for e in doc.entities] == [0, 1, 2]
    assert doc.entities[2].links == ()  # its answer (entity 3) is gone
    assert doc.entities[1].word_ids == (1,) and doc.words[1].box == (85, 10, 120, 20)


def test_insert_joins_the_entity_of_the_word_before():
    twin = _doc().words[1]
    doc = insert_words(_doc(), {1: [Word("John", box_beside(twin.box, 30, 200))], -1: [Word("FORM", (0, 0, 5, 5))]})
    assert [w.text for w in doc.words] == ["FORM", "Name:", "John", "John", "Smith", "Date:", "today"]
    assert iob_tags(doc)[1] == ["O", "B-QUESTION", "B-ANSWER", "I-ANSWER", "I-ANSWER", "B-QUESTION", "B-ANSWER"]
    assert doc.entities[1].word_ids == (2, 3, 4)


def test_reorder_changes_only_the_order():
    doc = reorder_words(_doc(), [4, 3, 2, 1, 0])
    assert [w.text for w in doc.words] == ["today", "Date:", "Smith", "John", "Name:"]
    assert {doc.entity_text(e) for e in doc.entities} == {"Name:", "John Smith", "Date:", "today"}
    with pytest.raises(ValueError, match="permutation"):
        reorder_words(_doc(), [0, 0, 1, 2, 3])


@pytest.mark.parametrize("box,width,expected", [((10, 5, 40, 15), 20, (42, 5, 62, 15)),
                                                ((170, 5, 195, 15), 20, (148, 5, 168, 15)),
                                                ((0, 5, 200, 15), 50, (150, 5, 200, 15))])
def test_box_beside_stays_on_the_page(box, width, expected):
    assert box_beside(box, width, 200) == expected
