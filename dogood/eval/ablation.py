"""Modality ablation (Do-GOOD Table 1): score a model with one of its inputs removed.

Inspired by Do-GOOD's preliminary study (He et al. 2023, Sec. 4.1, Table 1),
which removed LayoutLMv3's image, layout or text embeddings at inference. A
dogood model is given documents, not embeddings, so the input is removed from
the document the model is given (the gold labels come from the untouched one):

- ``image``: a white page of the same size (grayscale 255);
- ``layout``: every word's box set to ``(0, 0, 0, 0)``, the box LayoutLM-family
  models give their special and padding tokens, so no word carries a position
  (segment-level boxes, the union of an entity's word boxes, become that box too);
- ``text``: the text of every token word replaced by the model's mask token
  (``mask_token``: a Hugging Face tokenizer's, e.g. ``<mask>``; else ``[MASK]``).

``image+layout`` (any ``+``-joined set) removes several at once: Table 1's
"w/ Text" row is ``image+layout``. A model declares the ablations it supports
(``ablations``, a set of the three names); a model that does not see an input
(``sees``) scores the same without it, which the row then says.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from dogood.core.document import Document, PageImage, Word
from dogood.core.errors import ModelError
from dogood.core.papers import Cites

MODALITIES = ("image", "layout", "text")
CITES = Cites("do-good", "4.1, Table 1 (inputs removed at inference)",
              inspired_by="the input is removed from the document given to the model, not its embeddings")
#: The box every word gets when layout is removed.
NO_BOX = (0, 0, 0, 0)
DEFAULT_MASK = "[MASK]"

CONVENTION = ("Modality ablation (inspired by Do-GOOD Sec. 4.1, Table 1, which removed LayoutLMv3's input embeddings): "
              "the model is given each ID document with an input removed and scored against the untouched gold; image "
              "→ a white page of the same size; layout → every word box (0, 0, 0, 0), the box of special tokens; text → "
              "every token word's text replaced by the model's mask token. The change is paired by document, as an OOD "
              "set's.")


def parse_ablations(values: Iterable[str]) -> list[tuple[str, ...]]:
    """``["layout", "image+layout"]`` -> ``[("layout",), ("image", "layout")]``, each set in MODALITIES order."""
    out: list[tuple[str, ...]] = []
    for value in values:
        parts = {p.strip() for p in str(value).split("+") if p.strip()}
        unknown = sorted(parts - set(MODALITIES))
        if not parts or unknown:
            raise ModelError(f"--ablate {value!r}: name one or more of {', '.join(MODALITIES)} (joined by +)")
        combo = tuple(m for m in MODALITIES if m in parts)
        if combo not in out:
            out.append(combo)
    return out


def ablation_name(combo: Sequence[str]) -> str:
    return "w/o " + "+".join(combo)


def check_supported(model, combos: Sequence[Sequence[str]]) -> None:
    """Refuse an ablation the model does not declare (``model.ablations``)."""
    declared = getattr(model, "ablations", None)
    name = getattr(model, "name", model)
    if declared is None:
        raise ModelError(f"model {name!r} does not declare which inputs it can be scored without (its 'ablations'); "
                         "predictions made elsewhere cannot be ablated")
    for combo in combos:
        missing = [m for m in combo if m not in declared]
        if missing:
            raise ModelError(f"model {name!r} cannot be scored without its {'+'.join(missing)}: it supports "
                             f"--ablate {', '.join(m for m in MODALITIES if m in declared) or 'nothing'}")


def ablate(doc: Document, combo: Sequence[str], mask_token: str = DEFAULT_MASK) -> Document:
    """``doc`` with the inputs ``combo`` removed (see the module docstring); ids, entities and labels kept."""
    changes = {}
    words = doc.words
    if "layout" in combo:
        words = tuple(Word(w.text, NO_BOX) for w in words)
    if "text" in combo:
        words = tuple(Word(mask_token if w.text.strip() else w.text, w.box) for w in words)
    if words is not doc.words:
        changes["words"] = words
    if "image" in combo:
        changes["image"] = PageImage.from_array(np.full((doc.height, doc.width), 255, dtype=np.uint8))
    return doc.replace(**changes) if changes else doc


def blind_note(combo: Sequence[str], sees) -> str | None:
    """What the row should say when the model does not see what was removed."""
    if sees is None:
        return None
    unseen = [m for m in combo if m not in sees]
    if not unseen:
        return None
    what = {"image": "pixels", "layout": "boxes", "text": "words"}
    return "; ".join(f"the model sees no {what[m]}" for m in unseen)
