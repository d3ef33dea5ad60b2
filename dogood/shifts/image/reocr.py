"""Re-read the words of a shifted page with Tesseract (what Do-GOOD did for RVL-CDIP-I)."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from dogood.core.boxes import transfer_owners
from dogood.core.document import Entity
from dogood.core.papers import Cites
from dogood.shifts import params
from dogood.shifts.base import Outcome, Shift
from dogood.shifts.resources import resource


class ReOCR(Shift):
    """Replace the words and boxes with what Tesseract reads on the (shifted) page.

    Do-GOOD built RVL-CDIP-I1/I2 and ran OCR on the new images, so the text a
    model sees carries the OCR errors the image shift causes. Put this shift
    after an image shift to do the same; without it, the source's words are
    kept and their boxes re-projected, which is exact. Results are cached
    per image by :func:`dogood.page.ocr.ocr_words`.

    Entity labels follow the words: each OCR word joins the entity of the old
    word that covers most of it (at least ``min_overlap`` of its area); links
    are kept. The document label and QA pairs are unchanged.

    Parameters: :class:`ReOCR.Params`.

    Counts: ``words_before``, ``words_after`` and, on pages with entities,
    ``labelled`` (OCR words that joined an entity), ``unlabelled``,
    ``entities_lost`` (entities no OCR word joined).
    """

    name = "reocr"
    requires = ("tesseract",)
    reported_counts = ("words_before", "words_after", "labelled", "unlabelled", "entities_lost")
    family = "image"
    factors = frozenset({"text", "word_order", "word_set", "box_position", "box_size", "reading_order"})
    reads_words = True
    papers = (Cites("do-good", "3.1 (RVL-CDIP-I1/I2: OCR on the new images)",
                    inspired_by="Tesseract re-reads the page; entity labels pass to OCR words by box overlap"),)
    counts_help = {
        **Shift.counts_help,
        "words_before": "words before the shifted page was read again",
        "words_after": "words Tesseract read on the shifted page",
        "labelled": "OCR words that joined an entity (an old word covers enough of them)",
        "unlabelled": "OCR words that joined no entity",
        "entities_lost": "entities no OCR word joined",
    }

    class Params(params.Params):
        lang: params.Text = Field("eng", description="Tesseract language(s), e.g. eng")
        config: params.Text = Field("", description="extra Tesseract options, e.g. --psm 6")
        min_overlap: params.Real = Field(0.5, gt=0, le=1, description="share of an OCR word's box an old word must "
                                                                      "cover to pass its label on")

    def prepare(self) -> None:
        resource("tesseract")  # a clear error now when Tesseract is missing, not in a worker

    def card_notes(self, schema: str = "funsd") -> list[str]:
        from dogood.page.ocr import tesseract_version

        labels = (f"; entity labels pass to OCR words that an old word covers by at least {self.min_overlap:.0%}"
                  if schema == "funsd" else "")
        return [f"`reocr`: words and boxes re-read by Tesseract {tesseract_version()} (lang `{self.lang}`"
                f"{', config `' + self.config + '`' if self.config else ''}) on the shifted page{labels}."]

    def apply(self, doc, rng):
        from dogood.page.ocr import ocr_words

        words = ocr_words(doc.image, lang=self.lang, config=self.config)
        entity_of_word = doc.word_entity()
        index = {e.id: k for k, e in enumerate(doc.entities)}
        group = np.array([-1 if e is None else index[e.id] for e in entity_of_word], np.int64)
        new_boxes = np.array([w.box for w in words], np.int64).reshape(-1, 4)
        owner = transfer_owners(doc.boxes, new_boxes, self.min_overlap, group)
        members: list[list[int]] = [[] for _ in doc.entities]
        for new, k in enumerate(owner.tolist()):
            if k >= 0:
                members[k].append(new)
        entities = tuple(Entity(e.id, e.label, members[k], e.links) for k, e in enumerate(doc.entities))
        labelled = sum(len(m) for m in members)
        counts = {"words_before": len(doc.words), "words_after": len(words)}
        if doc.entities:  # pages with entities (FUNSD); RVL-CDIP pages have none
            counts["labelled"] = labelled
            counts["unlabelled"] = len(words) - labelled
            counts["entities_lost"] = sum(1 for k, e in enumerate(doc.entities) if e.word_ids and not members[k])
        return Outcome(doc.replace(words=words, entities=entities), counts)
