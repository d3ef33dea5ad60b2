"""The key-information-extraction pipeline a deployment runs: OCR the page, then tag the words read.

``--model pipeline:tesseract+baseline`` (any OCR engine of
:mod:`dogood.models.ocr_engine`, any token model :func:`dogood.models.load_model`
loads): the engine reads the page's words and boxes, the tagger tags them as
it would a dataset's words, and the predicted entities pass back to the
document's own (gold) token words by box overlap, as the ``reocr`` shift passes
labels to OCR words (:func:`dogood.core.boxes.transfer_owners`, in the other
direction): a gold word takes the predicted entity whose OCR words cover at
least ``min_overlap`` of its box (summed over the entity's words), else ``O``;
consecutive gold words taking the same predicted entity form one entity
(``B-`` then ``I-``). So the pipeline is scored end to end against the true
words: words the OCR misses or merges, and text it misreads, cost entities.

The pipeline sees only the pixels: the document's own words and boxes reach it
only through the OCR. It gives no per-token confidences (its tags are carried
over from other words), so OOD detection and calibration are not computed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dogood.core.boxes import transfer_owners
from dogood.core.document import Document, Word
from dogood.core.errors import ModelError
from dogood.core.schema import token_index
from dogood.models.predictions import Prediction


def _chunks(tags: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """Per tag, the entity chunk it belongs to (-1 for ``O``) and each chunk's type: seqeval's default chunking
    (``B-X`` starts a chunk, ``I-X`` continues one of type X or starts one)."""
    group = np.full(len(tags), -1, np.int64)
    types: list[str] = []
    prev = None
    for k, tag in enumerate(tags):
        if tag == "O" or len(tag) < 3:
            prev = None
            continue
        kind = tag[2:]
        if tag.startswith("I-") and prev == kind:
            group[k] = len(types) - 1
        else:
            types.append(kind)
            group[k] = len(types) - 1
        prev = kind
    return group, types


class PipelineModel:
    """An OCR engine followed by a token tagger, scored on the document's gold words (``task == "token"``)."""

    task = "token"
    sees = frozenset({"image"})
    ablations = frozenset({"image"})

    def __init__(self, engine, tagger, min_overlap: float = 0.5):
        if getattr(engine, "task", None) != "ocr":
            raise ModelError(f"{getattr(engine, 'name', engine)!r} is not an OCR engine")
        if getattr(tagger, "task", None) != "token":
            raise ModelError(f"the pipeline's tagger {getattr(tagger, 'name', tagger)!r} does {tagger.task} "
                             "prediction, not token tagging")
        level = getattr(tagger, "box_level", None)
        if getattr(tagger, "takes_boxes", False) and level not in (None, "word", "record"):
            raise ModelError(f"the pipeline's tagger {getattr(tagger, 'name', tagger)!r} reads {level} boxes, but the "
                             f"OCR engine gives word boxes: train the baseline at word level (`dogood train-baseline "
                             "--box-level word`) or give a tagger fine-tuned on word boxes")
        self.engine, self.tagger, self.min_overlap = engine, tagger, float(min_overlap)
        self.name = f"pipeline:{engine.name}+{tagger.name}"
        self.options = dict(getattr(engine, "options", None) or {})  # the engine's (--ocr-option), for the report
        self.description = (f"{getattr(engine, 'description', engine.name)}, then {tagger.name} on the words read; "
                            f"labels back to the gold words that predicted entities cover ≥ {self.min_overlap:.0%}")

    def transfer(self, doc: Document, read: Document, tags: Sequence[str]) -> tuple[str, ...]:
        """The tags of ``doc``'s token words from ``tags`` predicted on the token words of ``read`` (OCR words)."""
        gold_index = token_index(doc)
        read_index = token_index(read)
        group, types = _chunks(tags)
        old = read.boxes[read_index] if read_index else np.zeros((0, 4), np.int64)
        new = doc.boxes[gold_index] if gold_index else np.zeros((0, 4), np.int64)
        owner = transfer_owners(old, new, self.min_overlap, group)
        out: list[str] = []
        prev = -1
        for o in owner.tolist():
            out.append("O" if o < 0 else ("I-" if o == prev else "B-") + types[o])
            prev = o
        return tuple(out)

    def predict(self, docs: Sequence[Document]) -> dict[str, Prediction]:
        docs = list(docs)
        read = self.engine.predict(docs)
        out: dict[str, Prediction] = {}
        for doc in docs:
            if doc.id in out:
                raise ModelError(f"document id {doc.id!r} given twice: predictions are keyed by id")
            words = tuple(Word(t, b) for t, b, _ in (read[doc.id].words or ()))
            page = doc.replace(words=words, entities=(), qa=())
            tags = self.tagger.predict([page])[doc.id].tags or ()
            out[doc.id] = Prediction(doc.id, tags=self.transfer(doc, page, tags))
        return out

    def __repr__(self) -> str:
        return f"PipelineModel({self.description})"
