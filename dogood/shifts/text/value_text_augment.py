"""Value Text Augment (form-attack paper): values replaced by random values of the same data type."""

from __future__ import annotations

import re
from itertools import pairwise
from typing import ClassVar

import numpy as np
from pydantic import AliasChoices, Field

from dogood.core.document import Document
from dogood.core.papers import Cites
from dogood.language.edits import kept_tallies, redraw_guard, with_texts
from dogood.language.lexicons import require
from dogood.language.values import (
    data_type,
    faker_for,
    faker_note,
    faker_text,
    key_hint,
    number_prefix,
    random_date,
    random_money,
    random_number,
    redraw_digits,
    split_into,
    upper_like,
)
from dogood.language.words import MAX_WORD_LENGTH, is_latin
from dogood.shifts import params
from dogood.shifts.base import KEPT_HELP, Outcome, Shift, SkipDocument


class ValueTextAugment(Shift):
    """Value Text Augment: answer texts replaced by random values of the same data type (form-attack paper).

    Values on FUNSD are ``answer`` entities (keys are ``question``). Each
    value entity is selected with probability ``fraction`` (the paper augments all
    values: ``fraction=1``) and its text typed by :func:`dogood.language.values.data_type`:

    - ``date``, ``number``, ``money``: a new value by the paper's procedure
      (as in BG Adversarial; a number keeps a ``#``/``No.`` prefix, money
      keeps or leaves out the ``$`` as the original did);
    - ``digits`` (phone numbers, codes, ratios such as ``(212) 403- 1000``):
      every digit redrawn, separators and spacing kept;
    - ``other``: when the linked key's text suggests it (:data:`dogood.language.values.KEY_HINTS`:
      ``Name:``, ``TO:``, ``Company:``, ``Address:``, ``City:``), a Faker
      name, company, address or city with the same number of words (as the
      paper does for SROIE; up to 30 draws, else unchangeable), in capitals
      if the old text was; otherwise, and for placeholders (``N/A``, ``X``,
      a tick), the text is kept (counted unchangeable).

    Boxes and word counts are kept: the new value is cut into one piece per
    old token word (:func:`dogood.language.values.split_into`, cutting after ``/``, ``-``, ``$`` as
    OCR does: ``March 17, 1995`` -> ``03/`` ``17/`` ``05``); a value whose
    new text would change type when cut, or is too short, stays unchanged.
    The new text always has the old type. With ``render`` a value whose
    words' print cannot be matched (handwriting: :class:`dogood.page.render.Redraw`)
    is left as written, counted unchangeable and tallied ``kept`` by reason;
    the new value must also read where it is drawn, in each piece's own box
    at its print's own size (:meth:`dogood.page.render.Redraw.fits`;
    twelve digits do not fit where a ``3`` was), and new words must not run
    together where the old token words were one printed word
    (:meth:`joins_kept`): one that fails is drawn again, so boxes stay the
    words' own. Counts are per entity:
    ``eligible``, ``changed``, ``unchangeable`` (``unfit``: of those, values
    for which only new values that would not read were drawn), and
    ``changed_<type>``.

    Parameters: :class:`ValueTextAugment.Params`.
    """

    name = "value_text_augment"
    reported_counts = ("eligible", "changed", "unchangeable", *(f"changed_{kind}" for kind in (
        "date", "money", "number", "digits", "other", "company", "address", "city", "name")))
    family = "text"
    tallies_help: ClassVar[dict[str, str]] = {"kept": KEPT_HELP}
    factors = frozenset({"text"})
    #: ``render: true`` redraws words: a build tests them for the redrawn-word cue (:mod:`dogood.measures.word_style`).
    render_cues = frozenset({"word_style"})
    papers = (Cites("form-attacks", "form-level transformations, Field-value augmentation: Value Text Augment "
                                    "(SROIE values with Faker); parameters in Implementation Details"),)

    label_params = ("labels",)
    counts_help = {
        **Shift.counts_help,
        "unfit": "values left unchanged because every new value drawn would not read in its boxes (render)",
    }

    class Params(params.Params):
        fraction: params.Real = Field(1.0, ge=0, le=1, validation_alias=AliasChoices("fraction", "p"),
                                      description="probability that a value entity is replaced (paper: all, 1.0)")
        labels: params.Names = Field(("answer",), description="entity labels that are values")
        key_labels: params.Names = Field(("question",), description=(
            "labels of the linked entities whose text hints at a Faker kind"))
        render: params.Flag = Field(False, description="also redraw the changed words in the page image")

    def prepare(self) -> None:
        require(self.name, "faker")

    def apply(self, doc: Document, rng: np.random.Generator) -> Outcome:
        if not doc.words:
            raise SkipDocument("no words")
        by_id = {e.id: e for e in doc.entities}
        values = [e for e in doc.entities if e.label in self.labels and any(doc.words[i].text.strip() for i in e.word_ids)]
        picked = [e for e, u in zip(values, rng.random(len(values))) if u < self.fraction]
        fake = faker_for(rng)
        changes: dict[int, str] = {}
        counts = {"eligible": len(values), "changed": 0, "unchangeable": 0}
        guard = redraw_guard(doc, self.render)
        fits = (lambda i, text: guard.fits(i, text, count=False)) if guard is not None else None
        for ent in picked:
            ids = [i for i in ent.word_ids if doc.words[i].text.strip()]
            if guard is not None and any([guard.kept(i) is not None for i in ids]):  # handwriting: left as written
                counts["unchangeable"] += 1
                continue
            old = [doc.words[i].text for i in ids]
            linked = {b if a == ent.id else a for a, b in ent.links if ent.id in (a, b)} - {ent.id}
            key_text = " ".join(doc.entity_text(by_id[k]) for k in sorted(linked)
                                if k in by_id and by_id[k].label in self.key_labels)
            turned_down = []

            words_apart = data_type(" ".join(old)) == "other"  # Faker's words: a space at every join

            def check(texts, ids=ids, turned_down=turned_down, words_apart=words_apart):
                ok = all(map(fits, ids, texts)) and (not words_apart or self.joins_kept(doc, ids, texts))
                if not ok:
                    turned_down.append(texts)
                return ok

            kind, new = self.new_value(old, key_text, rng, fake, None if fits is None else check)
            if new is None or new == old:
                counts["unchangeable"] += 1
                if new is None and turned_down:
                    counts["unfit"] = counts.get("unfit", 0) + 1
                continue
            changes.update(zip(ids, new))
            counts["changed"] += 1
            counts[f"changed_{kind}"] = counts.get(f"changed_{kind}", 0) + 1
        return Outcome(with_texts(doc, changes, self.render), counts, kept_tallies(guard))

    def card_notes(self, schema: str = "funsd") -> list[str]:
        return [faker_note(self.name)]

    @staticmethod
    def joins_kept(doc: Document, ids: list[int], texts: list[str]) -> bool:
        """Whether words ``texts`` (a Faker name or company, one word per piece) drawn in the boxes of words
        ``ids`` keep a space between them: where two token words are one printed word (``Maid`` ``-O``
        ``Clover``, ``Dari`` ``Mart``: the boxes touch on one line), two new words would run into each other
        (``Stanleyand``), unless one of them ends or starts with a separator."""
        for (a, ta), (b, tb) in pairwise(zip(ids, texts, strict=True)):
            (_, ay0, ax1, ay1), (bx0, by0, _, by1) = doc.words[a].box, doc.words[b].box
            height = min(ay1 - ay0, by1 - by0)
            same_line = min(ay1, by1) - max(ay0, by0) > height / 2
            if same_line and bx0 - ax1 <= max(1, height // 10) and ta and tb and ta[-1].isalnum() and tb[0].isalnum():
                return False
        return True

    def new_value(self, old: list[str], key_text: str, rng: np.random.Generator, fake,
                  fits=None) -> tuple[str, list[str] | None]:
        """``(type, new word texts)`` for a value whose token words are ``old`` (``None``: cannot change).

        ``fits`` (with ``render``): a new value whose pieces do not all pass it is drawn again, as one that
        changed type would be."""
        text = " ".join(old)
        kind = data_type(text)
        if len(text) > MAX_WORD_LENGTH * max(1, len(old)) or not is_latin(text):
            return kind, None
        lengths = [len(w) for w in old]
        for _ in range(30):
            if kind == "date":
                new = split_into(upper_like(random_date(rng, fake), text), lengths)
            elif kind == "number":
                new = split_into(number_prefix(text) + random_number(rng), lengths)
            elif kind == "money":
                new = split_into(random_money(rng, dollar="$" in text), lengths)
            elif kind == "digits":
                new = [redraw_digits(w, rng) for w in old]
            else:
                hint = key_hint(key_text)
                if hint is None or sum(c.isalpha() for c in text) < 2 or re.fullmatch(r"n\s*/\s*a\.?", text.lower()):
                    return kind, None
                new = faker_text(fake, hint)
                new = (new.upper() if text.isupper() else new).split()
                if len(new) != len(old):
                    continue
            if new is not None and data_type(" ".join(new)) == kind:
                if fits is not None and not fits(new):
                    continue
                return (kind if kind != "other" else key_hint(key_text)), new
        return kind, None
