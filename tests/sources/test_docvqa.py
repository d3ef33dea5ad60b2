"""DocVQA source (official layout), the docvqa schema round trip, and answers protected from text shifts."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

from dogood.core.errors import DocumentError, SourceError
from dogood.language.budget import change_fraction
from dogood.language.selection import answer_words, eligible_words
from dogood.pipeline.build import build
from dogood.pipeline.recipe import parse_recipe
from dogood.sources import open_source
from dogood.sources.hf_dataset import HFDatasetSource

PAGES = 3  # the pages of the docvqa_root fixture (tests/conftest.py)


def test_pages_carry_their_questions_and_ocr_words(docvqa_root, funsd_test):
    source = open_source({"kind": "docvqa"}, "val", docvqa_root)
    assert source.ids() == sorted(funsd_test.ids()[:PAGES])
    doc = source.load(source.ids()[0])
    original = funsd_test.load(doc.id)
    assert [w.text for w in doc.words] == [w.text for w in original.words if w.text.strip()]
    assert [w.box for w in doc.words] == [w.box for w in original.words if w.text.strip()]
    assert doc.qa and all(q.id.isdigit() and q.answers for q in doc.qa)


def test_answers_are_never_eligible_for_text_shifts(docvqa_root):
    source = open_source({"kind": "docvqa"}, "val", docvqa_root)
    for doc_id in source.ids():
        doc = source.load(doc_id)
        protected = answer_words(doc)
        assert protected, doc_id
        protected_text = " ".join(doc.words[i].text for i in sorted(protected))
        for q in doc.qa:  # every answer word that has letters or digits is protected
            assert all(part in protected_text for part in q.answers[0].split() if any(c.isalnum() for c in part))
        assert not protected & set(eligible_words(doc))
        changes, counts = change_fraction(doc, np.random.default_rng(0), 1.0, lambda i, rng: doc.words[i].text + "x")
        assert counts["changed"] == len(eligible_words(doc)) == len(doc.words) - len(protected)
        assert not set(changes) & protected


def test_docvqa_schema_round_trips_through_a_build(docvqa_root, tmp_path):
    recipe = parse_recipe({"name": "docvqa-id", "version": "1.0.0", "source": {"kind": "docvqa"}, "splits": ["val"],
                           "seed": 0, "configs": {"original": [], "merge": [{"shift": "merge"}]}})
    out = tmp_path / "out"
    build(recipe, out, source_path=docvqa_root, progress=False)
    source = open_source({"kind": "docvqa"}, "val", docvqa_root)
    back = HFDatasetSource(name=out, split="val", config="original")
    assert back.schema == "docvqa" and back.ids() == source.ids()
    for doc_id in source.ids():
        a, b = source.load(doc_id), back.load(doc_id)
        assert b.qa == a.qa and b.words == a.words
    card = (out / "README.md").read_text()
    assert "document-question-answering" in card and "questions" in card


def test_bad_files_are_named(docvqa_root, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(docvqa_root, broken)
    page = sorted((broken / "val" / "ocr_results").iterdir())[0]
    page.write_text("{not json")
    source = open_source({"kind": "docvqa"}, "val", broken)
    with pytest.raises(DocumentError, match=page.name):
        source.load(page.stem)
    (broken / "val" / "documents" / f"{page.stem}.png").unlink()
    with pytest.raises(DocumentError, match="missing"):
        source.load(page.stem)
    (broken / "val" / "val_v1.0.json").write_text("[1, 2")
    with pytest.raises(SourceError, match="val_v1.0.json"):
        open_source({"kind": "docvqa"}, "val", broken)
    with pytest.raises(SourceError, match="rrc.cvc.uab.es"):
        open_source({"kind": "docvqa"}, "val", tmp_path / "nowhere")


def test_docvqa_t_changes_text_around_the_answers_only(docvqa_root, tmp_path):
    from dogood.pipeline.recipe import load_recipe

    configs = ["homoglyph_swap", "char_deletion", "number_swap"]
    out = tmp_path / "docvqa-t"
    build(load_recipe("docvqa-t"), out, source_path=docvqa_root, configs=configs, progress=False)
    source = open_source({"kind": "docvqa"}, "val", docvqa_root)
    for config in configs:
        shifted = HFDatasetSource(name=out, split="val", config=config)
        changed = eligible = 0
        for doc_id in source.ids():
            a, b = source.load(doc_id), shifted.load(doc_id)
            assert b.qa == a.qa and [w.box for w in b.words] == [w.box for w in a.words]
            protected = answer_words(a)
            assert all(a.words[i].text == b.words[i].text for i in protected)
            changed += sum(x.text != y.text for x, y in zip(a.words, b.words))
            eligible += len(eligible_words(a))
        if config != "number_swap":  # numbers are too few on three forms to reach 10%
            assert abs(changed / eligible - 0.1) < 0.02, config


# -- hostile folders (issue 36) --------------------------------------------------------------------------------
@pytest.mark.parametrize("image, message", [("/etc/hostname", "absolute name"), ("../../secret.png", "leaves"),
                                            ("documents/../../x.png", "leaves")])
def test_questions_naming_images_outside_the_split_are_refused(docvqa_root, tmp_path, image, message):
    broken = tmp_path / "broken"
    shutil.copytree(docvqa_root, broken)
    qa = broken / "val" / "val_v1.0.json"
    data = json.loads(qa.read_text())
    data["data"][1]["image"] = image
    qa.write_text(json.dumps(data))
    with pytest.raises(SourceError, match=f"val_v1.0.json: entry 1: image .*{message}"):
        open_source({"kind": "docvqa"}, "val", broken)


def test_a_page_linked_out_of_the_split_or_an_ocr_fifo_is_refused(docvqa_root, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(docvqa_root, broken)
    pages = sorted((broken / "val" / "documents").iterdir())
    shutil.move(pages[0], tmp_path / "private.png")
    pages[0].symlink_to(tmp_path / "private.png")
    ocr = broken / "val" / "ocr_results" / f"{pages[1].stem}.json"
    ocr.unlink()
    os.mkfifo(ocr)
    source = open_source({"kind": "docvqa"}, "val", broken)
    with pytest.raises(DocumentError, match=f"document '{pages[0].stem}'.*outside"):
        source.load(pages[0].stem)
    with pytest.raises(DocumentError, match=f"document '{pages[1].stem}'.*is a FIFO"):
        source.load(pages[1].stem)


def test_an_ocr_file_of_too_many_words_is_refused(docvqa_root, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(docvqa_root, broken)
    page = sorted((broken / "val" / "ocr_results").iterdir())[0]
    words = [{"boundingBox": [1, 1, 2, 1, 2, 2, 1, 2], "text": "w"}] * 20_000
    page.write_text(json.dumps({"recognitionResults": [{"lines": [{"words": words}]}]}))
    with pytest.raises(DocumentError, match="10001 words, more than the 10000"):
        open_source({"kind": "docvqa"}, "val", broken).load(page.stem)
