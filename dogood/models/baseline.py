"""dogood's offline baseline: a linear-chain CRF over word text and layout.

The baseline tags FUNSD-style token words (the words with non-blank text, in
the order of :func:`dogood.core.schema.iob_tags`) with the 7 IOB tags of
:data:`dogood.core.schema.FUNSD_NER_TAGS`. It needs no GPU, no network and no
pretrained weights: :func:`train_baseline` fits it on FUNSD train in 5-15 s
on two cores, and :class:`BaselineTagger` saves it as one file (about 1 MB).
It is the model ``dogood eval --model baseline`` scores, and the
semantic-strength scorer of the Move shift (its :meth:`~BaselineTagger.predict`).

Engine
    CRFsuite (``python-crfsuite``), first-order linear chain, trained with
    L-BFGS and elastic-net (L1 ``c1`` + L2 ``c2``) regularisation, with all
    label transitions allowed so that the model learns to avoid invalid ones
    (``O`` -> ``I-X``). Training is deterministic: the same documents in the
    same order give the same model bytes.

Sequence order
    Each document is one sequence, in the document's given word order. For
    FUNSD that order follows the annotation (entity by entity, each entity's
    words in reading order), as the Hub's FUNSD loaders and LayoutLM-family
    fine-tuning scripts use it. This order leaks some of the entity grouping
    into the input (consecutive words mostly belong to one entity, and a jump
    on the page marks a boundary); the baseline uses it on purpose, because
    every model scored on a dogood dataset sees the same order. Features that
    do not depend on the order (position, size, the geometric neighbours) keep
    the model usable when words are reordered: trained on FUNSD train on the
    record's word boxes (``record``), it scores entity F1 0.71 on FUNSD test in
    the given order and 0.56 when the test words are re-sorted top-to-bottom,
    left-to-right; on segment-level ``bboxes`` (``segment``, which carry the
    entity grouping too) 0.79 in the given order (``bench/RESULTS.md`` (m)).

Input (:func:`token_inputs`)
    Exactly what a Hugging Face token classifier reads from a dogood or Hub FUNSD row: ``tokens`` (the words
    with non-blank text, stripped) and ``bboxes`` (0-1000, :func:`dogood.core.boxes.normalize_box`) in the
    model's box convention (``box_level``: ``segment``, each token its entity's box, or ``word``), computed as
    :func:`dogood.core.schema.document_to_row` writes them, so they equal the dataset's columns whenever the
    dataset is in that convention (``dogood eval`` refuses a dataset in another). The model is trained at its
    convention and the model file records it. ``record`` is the third convention: the record's own word boxes
    in pixels (the ``dogood`` column), which only the Move shift's scorer reads (Move acts on records); files
    written before conventions were recorded are ``record`` models.

Features (:func:`word_features`, one dict per token word; all categorical)
    Text: lower-cased text (digits mapped to ``0``), word shape (``Xx:``,
    ``d/d/d``: runs collapsed), 3-character prefix, 2- and 3-character
    suffixes, length bucket, and flags: all digits, has a digit, ends with
    ``:``, all capitals, title case, punctuation only.
    Layout (scale-free: the unit of length is the page's median token-word
    height): centre ``x`` in 8 and ``y`` in 10 page-relative bins, left edge
    in 10 bins, a coarse 4x5 grid cell, width bucket, font-size proxy (box
    height / median height, bucketed; also crossed with all-capitals), number
    of words on the same line and their share of all-capital words.
    Sequence neighbours (previous and next token word in the given order):
    text, shape, ``:`` ending, same line or not; on the same line the
    horizontal gap bucket, else (a new line starts) the vertical gap and the
    left-edge shift buckets; the words two before and after; the previous and
    current words as a pair; begin/end of sequence.
    Geometric neighbours (found on the page, whatever the order): the nearest
    word directly left on the same line (none, text, shape, ``:`` ending,
    gap bucket, gap bucket when it ends with ``:``, whether it is also the
    previous word of the sequence), directly right (none, shape, ``:``
    ending, gap bucket, whether it is the next word), directly above (none,
    text, shape, ``:`` ending, all capitals, gap bucket), below (none, gap
    bucket).

Page-relative features divide by the page's size (1000 x 1000 for the 0-1000 conventions).

Buckets are strings on purpose: CRFsuite reads a numeric value as a feature
*weight*, not a category. :func:`word_features` costs O(n^2) numpy work for
the neighbour search plus one pass of plain Python (text features are
cached): about 12 ms for a 430-word page, cheap enough to run inside a shift
over thousands of pages.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pycrfsuite

from dogood.core import fs
from dogood.core.boxes import normalize_box
from dogood.core.document import Document
from dogood.core.paths import write_zip_atomic
from dogood.core.progress import one_time_step
from dogood.core.schema import BOX_LEVELS, FUNSD_NER_TAGS, iob_tags, token_boxes
from dogood.models.base import ModelError, default_baseline_path
from dogood.models.crf_file import CrfFileError, check_crf_model
from dogood.models.model_zip import CHECKSUMS, member_checksums, read_model_zip
from dogood.models.predictions import Prediction

MODEL_NAME = "dogood-crf-baseline"
FORMAT_NAME = "dogood-crf-baseline"
FORMAT_VERSION = 1
FEATURE_VERSION = 1
MODEL_MEMBER = "model.crfsuite"
META_MEMBER = "meta.json"

#: What the baseline can read: a dataset's box convention (:data:`dogood.core.schema.BOX_LEVELS`), or the
#: record's own pixel word boxes (``record``: the Move shift's scorer). A file that records none is ``record``.
INPUTS = (*BOX_LEVELS, "record")
#: The convention ``dogood train-baseline`` trains at unless told: FUNSD-style data's default (segment).
DEFAULT_BOX_LEVEL = "segment"

DEFAULT_C1 = 0.05
DEFAULT_C2 = 0.3
DEFAULT_MAX_ITERATIONS = 200

# Bucket edges; lengths are in units of the page's median token-word height.
_LEN_EDGES = (2, 3, 5, 8)  # characters: 1 | 2 | 3-4 | 5-7 | 8+
_WIDTH_EDGES = (1.0, 2.0, 4.0, 8.0, 16.0)
_HEIGHT_EDGES = (0.7, 0.9, 1.15, 1.5, 2.2)  # font-size proxy: height / median height
_HGAP_EDGES = (-2.0, 0.0, 0.5, 1.5, 3.0, 6.0)
_VGAP_EDGES = (-3.0, -0.5, 0.5, 1.8, 3.5, 8.0)
_ABOVE_EDGES = (0.3, 1.0, 2.0, 4.0)


# --------------------------------------------------------------------------- features
def _shape(text: str) -> str:
    """Collapsed word shape: ``Date:`` -> ``Xx:``, ``12/03/92`` -> ``d/d/d`` (at most 8 characters)."""
    out: list[str] = []
    prev = ""
    for ch in text:
        if ch.isupper():
            c = "X"
        elif ch.islower():
            c = "x"
        elif ch.isdigit():
            c = "d"
        elif ch.isalpha():
            c = "a"
        elif ch.isspace():
            c = "_"
        else:
            c = ch
        if c != prev:
            out.append(c)
            prev = c
    return "".join(out)[:8]


def _norm(text: str) -> str:
    """Lower-cased text with every digit mapped to ``0`` (``Ext.`` -> ``ext.``, ``9/3/92`` -> ``0/0/00``)."""
    text = text.lower()
    if any(ch.isdigit() for ch in text):
        text = "".join("0" if ch.isdigit() else ch for ch in text)
    return text


def _buckets(values: np.ndarray, edges: Sequence[float]) -> list[str]:
    """Bucket index of each value (``bisect_right`` semantics), as strings: categorical CRF features."""
    return [str(k) for k in np.searchsorted(np.asarray(edges, dtype=np.float64), values, side="right").tolist()]


@lru_cache(maxsize=1 << 16)
def _text_features(t: str) -> dict[str, Any]:
    """The text-only features of a (stripped) word; cached, so treat the dict as read-only."""
    has_alpha = any(ch.isalpha() for ch in t)
    has_digit = any(ch.isdigit() for ch in t)
    f: dict[str, Any] = {
        "w": _norm(t),
        "shape": _shape(t),
        "p3": t[:3].lower(),
        "s2": t[-2:].lower(),
        "s3": t[-3:].lower(),
        "len": str(bisect_right(_LEN_EDGES, len(t))),
    }
    if t.isdigit():
        f["digits"] = True
    elif has_digit:
        f["has_digit"] = True
    if t.endswith(":"):
        f["colon"] = True
    if has_alpha and t.isupper():
        f["caps"] = True
    elif t.istitle():
        f["title"] = True
    if not has_alpha and not has_digit:
        f["punct"] = True
    return f


def _nearest(gaps: np.ndarray, unit: float, edges: Sequence[float]) -> tuple[list[int], list[str]]:
    """Per row: the column of the smallest finite gap (``-1`` for none) and that gap's bucket."""
    n = gaps.shape[0]
    j = gaps.argmin(axis=1)
    best = gaps[np.arange(n), j]
    found = np.isfinite(best)
    return np.where(found, j, -1).tolist(), _buckets(np.where(found, best, 0.0) / unit, edges)


#: Rows of the n x n neighbour comparisons made at once: memory grows as n x this, not n x n (a 10,000-word
#: page, ``Limits.page_words``, takes tens of megabytes per comparison instead of 800).
_BLOCK = 256


def _same_line(y0a, y1a, ha, y0b, y1b, hb) -> np.ndarray:
    """Whether words a and b share a line: their vertical overlap is over half the smaller height."""
    return (np.minimum(y1a, y1b) - np.maximum(y0a, y0b)) > 0.5 * np.minimum(ha, hb)


def _neighbours(x0, y0, x1, y1, h, cx, cy, unit: float, caps: np.ndarray):
    """The nearest word left, right, above and below each word (index, or ``-1``, and the gap's bucket), the
    words on each word's line and the capitalised ones among them: the n x n comparisons of every pair, made
    :data:`_BLOCK` rows at a time (each row's values are those of the whole matrix, so the result is too)."""
    n = len(x0)
    tol = 0.25 * unit
    inf = np.inf
    out: dict[str, list] = {k: [] for k in ("left", "right", "above", "below", "on_line", "caps")}
    for start in range(0, n, _BLOCK):
        r = slice(start, min(start + _BLOCK, n))
        rows = np.arange(r.start, r.stop)
        diagonal = (np.arange(len(rows)), rows)
        same_line = _same_line(y0[r, None], y1[r, None], h[r, None], y0[None, :], y1[None, :], h[None, :])
        same_line[diagonal] = False
        # left[i, j]: j ends before i starts (up to a small overlap) on i's line; right[i, j] is left[j, i]
        left = np.where(same_line & (x1[None, :] <= x0[r, None] + tol) & (cx[None, :] < cx[r, None]),
                        x0[r, None] - x1[None, :], inf)
        right = np.where(same_line & (x1[r, None] <= x0[None, :] + tol) & (cx[r, None] < cx[None, :]),
                         x0[None, :] - x1[r, None], inf)
        overlaps = (np.minimum(x1[r, None], x1[None, :]) - np.maximum(x0[r, None], x0[None, :])) > 0
        above_ok = overlaps & (y1[None, :] <= y0[r, None] + tol) & (cy[None, :] < cy[r, None])
        above_ok[diagonal] = False
        below_ok = overlaps & (y1[r, None] <= y0[None, :] + tol) & (cy[r, None] < cy[None, :])
        below_ok[diagonal] = False
        out["left"].append(_nearest(left, unit, _HGAP_EDGES))
        out["right"].append(_nearest(right, unit, _HGAP_EDGES))
        out["above"].append(_nearest(np.where(above_ok, y0[r, None] - y1[None, :], inf), unit, _ABOVE_EDGES))
        out["below"].append(_nearest(np.where(below_ok, y0[None, :] - y1[r, None], inf), unit, _ABOVE_EDGES))
        out["on_line"].append(same_line.sum(axis=1))
        out["caps"].append((same_line & caps[None, :]).sum(axis=1))
    joined = [tuple(sum((list(part[k]) for part in out[d]), []) for k in range(2))
              for d in ("left", "right", "above", "below")]
    return (*joined, np.concatenate(out["on_line"]), np.concatenate(out["caps"]))


def check_input(box_level: str) -> str:
    """``box_level`` if the baseline can read it (:data:`INPUTS`), else ``ValueError``."""
    if box_level not in INPUTS:
        raise ValueError(f"the baseline reads boxes at one of {', '.join(INPUTS)}, not {box_level!r}")
    return box_level


def token_inputs(doc: Document, box_level: str) -> tuple[list[str], np.ndarray, float, float]:
    """What the baseline reads of ``doc``: the token words' stripped texts, their boxes and the page's size.

    For ``segment`` and ``word``, the ``bboxes`` a FUNSD-style row of ``doc`` holds at that convention (0-1000,
    as :func:`dogood.core.schema.document_to_row` writes them) on a 1000 x 1000 page; for ``record``, the
    record's word boxes in pixels on the page's own size.
    """
    index = iob_tags(doc)[0]
    texts = [doc.words[i].text.strip() for i in index]
    if check_input(box_level) == "record":
        boxes = [doc.words[i].box for i in index]
        size = (float(max(doc.width, 1)), float(max(doc.height, 1)))
    else:
        boxes = [normalize_box(b, doc.width, doc.height) for b in token_boxes(doc, box_level, index)]
        size = (1000.0, 1000.0)
    return texts, np.array(boxes, dtype=np.float64).reshape(len(index), 4), *size


def word_features(doc: Document, box_level: str = "record") -> list[dict[str, Any]]:
    """Features of each token word of ``doc``, for the CRF.

    Parameters
    ----------
    doc : Document
        Any document; only its words, their boxes and the page size are read.
    box_level : str
        The boxes read (:func:`token_inputs`): ``segment`` or ``word`` (a dataset's ``bboxes``), ``record``
        (the record's pixel word boxes).

    Returns
    -------
    list of dict
        One dict per token word (the words with non-blank text), in the
        order of ``iob_tags(doc)[0]``. Values are strings (categories:
        CRFsuite makes them binary ``name:value`` features) or ``True``
        (flags). See the module docstring for the list.
    """
    texts, b, page_w, page_h = token_inputs(doc, box_level)
    n = len(texts)
    if n == 0:
        return []
    base = [_text_features(t) for t in texts]
    x0, y0, x1, y1 = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    h = np.maximum(y1 - y0, 1.0)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    unit = max(float(np.median(h)), 1.0)  # median word height: the length unit and the font-size proxy

    # Geometric neighbours: n x n comparisons, the nearest candidate in each direction, a block of rows at a time.
    caps = np.array(["caps" in f for f in base])
    (left, left_b), (right, right_b), (above, above_b), (below, below_b), on_line, caps_on_line = _neighbours(
        x0, y0, x1, y1, h, cx, cy, unit, caps)

    # Line statistics and per-word layout buckets.
    line_n = _buckets(on_line, (1, 2, 4, 8))
    line_caps = _buckets((caps_on_line + caps) / (on_line + 1.0), (0.01, 0.5, 0.99))
    xbin = np.clip((cx / page_w * 8).astype(int), 0, 7).tolist()
    ybin = np.clip((cy / page_h * 10).astype(int), 0, 9).tolist()
    x0bin = np.clip((x0 / page_w * 10).astype(int), 0, 9).tolist()
    gx = np.clip((cx / page_w * 4).astype(int), 0, 3).tolist()
    gy = np.clip((cy / page_h * 5).astype(int), 0, 4).tolist()
    width_b = _buckets((x1 - x0) / unit, _WIDTH_EDGES)
    size_b = _buckets(h / unit, _HEIGHT_EDGES)

    # Consecutive pairs in the sequence: (k, k + 1).
    pair_line = _same_line(y0[:-1], y1[:-1], h[:-1], y0[1:], y1[1:], h[1:]).tolist()
    pair_hgap = _buckets((x0[1:] - x1[:-1]) / unit, _HGAP_EDGES)
    pair_vgap = _buckets((cy[1:] - cy[:-1]) / unit, _VGAP_EDGES)
    pair_dx = _buckets((x0[1:] - x0[:-1]) / unit, _HGAP_EDGES)

    feats: list[dict[str, Any]] = []
    for i in range(n):
        me = base[i]
        f: dict[str, Any] = {"bias": True, **me}
        f["x"] = str(xbin[i])
        f["y"] = str(ybin[i])
        f["xy"] = f"{gx[i]}.{gy[i]}"
        f["x0"] = str(x0bin[i])
        f["wd"] = width_b[i]
        f["size"] = size_b[i]
        f["size_caps"] = f"{size_b[i]}.{'caps' in me}"
        f["line_n"] = line_n[i]
        f["line_caps"] = line_caps[i]
        # sequence neighbours; pair k joins words k and k + 1
        for key, j, k in (("-1", i - 1, i - 1), ("+1", i + 1, i)):
            if not 0 <= j < n:
                f["BOS" if key == "-1" else "EOS"] = True
                continue
            nb = base[j]
            f[key + "w"] = nb["w"]
            f[key + "shape"] = nb["shape"]
            if "colon" in nb:
                f[key + "colon"] = True
            if pair_line[k]:
                f[key + "line"] = True
                f[key + "hgap"] = pair_hgap[k]
            else:
                f[key + "newline"] = True
                f[key + "vgap"] = pair_vgap[k]
                f[key + "dx"] = pair_dx[k]
        if i > 0:
            f["-1w|w"] = base[i - 1]["w"] + "|" + me["w"]
        if i > 1:
            f["-2w"] = base[i - 2]["w"]
        if i + 2 < n:
            f["+2w"] = base[i + 2]["w"]
        # geometric neighbours
        j = left[i]
        if j < 0:
            f["L.none"] = True
        else:
            nb = base[j]
            f["L.w"] = nb["w"]
            f["L.shape"] = nb["shape"]
            f["L.gap"] = left_b[i]
            if "colon" in nb:
                f["L.colon"] = True
                f["L.colon.gap"] = left_b[i]
            if j == i - 1:
                f["L.is-1"] = True
        j = right[i]
        if j < 0:
            f["R.none"] = True
        else:
            nb = base[j]
            f["R.shape"] = nb["shape"]
            f["R.gap"] = right_b[i]
            if "colon" in nb:
                f["R.colon"] = True
            if j == i + 1:
                f["R.is+1"] = True
        j = above[i]
        if j < 0:
            f["A.none"] = True
        else:
            nb = base[j]
            f["A.w"] = nb["w"]
            f["A.shape"] = nb["shape"]
            f["A.gap"] = above_b[i]
            if "colon" in nb:
                f["A.colon"] = True
            if "caps" in nb:
                f["A.caps"] = True
        if below[i] < 0:
            f["B.none"] = True
        else:
            f["B.gap"] = below_b[i]
        feats.append(f)
    return feats


def _items(doc: Document, box_level: str) -> pycrfsuite.ItemSequence:
    return pycrfsuite.ItemSequence(word_features(doc, box_level))


# --------------------------------------------------------------------------- the model
class BaselineTagger:
    """A trained CRF baseline: tags, confidences and marginals per token word.

    Build one with :func:`train_baseline` or :meth:`load`.

    Attributes
    ----------
    name : str
        ``"dogood-crf-baseline"``.
    task : str
        ``"token"``.
    labels : tuple of str
        The tags the model knows, in :data:`~dogood.core.schema.FUNSD_NER_TAGS`
        order (all 7 for a model trained on FUNSD); the columns of
        :meth:`marginals`.
    meta : dict
        What ``meta.json`` holds: format and feature versions, labels,
        training parameters, training data size and the hash of its ids.
    source : str or None
        The file it was loaded from.

    Notes
    -----
    One instance holds one CRFsuite tagger and is not thread-safe; it pickles
    as its model bytes, so each worker process gets its own tagger.
    """

    name = MODEL_NAME
    task = "token"
    #: What the CRF is given: word text and boxes (its features), never the pixels.
    sees = frozenset({"text", "layout"})
    #: Inputs it can be scored without (``dogood eval --ablate``); without the pixels it never sees, it scores the same.
    ablations = frozenset({"text", "layout", "image"})
    #: It is given boxes, in :attr:`box_level` (``dogood eval`` checks it against the data's).
    takes_boxes = True

    def __init__(self, model_bytes: bytes, meta: dict[str, Any], *, source: str | None = None):
        self.model_bytes = bytes(model_bytes)
        self.meta = dict(meta)
        self.source = source
        try:
            #: The boxes it reads and was trained on (:data:`INPUTS`).
            self.box_level = check_input(self.meta.get("box_level", "record"))
        except ValueError as exc:
            raise ModelError(f"{self._where()}: {exc}") from None
        self._tagger: pycrfsuite.Tagger | None = None
        known = set(self._open().labels())
        self.labels: tuple[str, ...] = tuple(t for t in FUNSD_NER_TAGS if t in known)
        if len(self.labels) != len(known):
            extra = sorted(known - set(FUNSD_NER_TAGS))
            raise ModelError(f"{self._where()}: the CRF knows tags outside FUNSD's: {', '.join(extra)}")
        self._column = {t: k for k, t in enumerate(self.labels)}

    def _where(self) -> str:
        return f"baseline model {self.source}" if self.source else "baseline model"

    def _open(self) -> pycrfsuite.Tagger:
        if self._tagger is None:
            tagger = pycrfsuite.Tagger()
            try:
                tagger.open_inmemory(self.model_bytes)
            except (ValueError, OSError) as exc:
                raise ModelError(f"{self._where()}: the CRF model is corrupt ({exc})") from None
            self._tagger = tagger
        return self._tagger

    # Taggers are C objects: ship the model bytes between processes and reopen.
    def __getstate__(self) -> dict[str, Any]:
        return {"model_bytes": self.model_bytes, "meta": self.meta, "source": self.source}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["model_bytes"], state["meta"], source=state["source"])

    def __repr__(self) -> str:
        return (f"BaselineTagger({self.source or '<in memory>'}, {self.box_level} boxes, "
                f"{self.meta.get('num_documents')} training documents, {len(self.model_bytes)} bytes)")

    # -- inference --------------------------------------------------------------
    def _run(self, doc: Document, viterbi: bool = True) -> tuple[list[str], np.ndarray]:
        feats = word_features(doc, self.box_level)
        n, k = len(feats), len(self.labels)
        if n == 0:
            return [], np.zeros((0, k))
        tagger = self._open()
        tagger.set(pycrfsuite.ItemSequence(feats))
        tags = list(tagger.tag()) if viterbi else []
        marg = np.array([[tagger.marginal(label, pos) for label in self.labels] for pos in range(n)], dtype=np.float64)
        marg = np.clip(marg, 0.0, None)
        sums = marg.sum(axis=1, keepdims=True)
        marg = np.divide(marg, sums, out=np.full_like(marg, 1.0 / k), where=sums > 0)
        return tags, marg

    def marginals(self, doc: Document) -> np.ndarray:
        """CRF marginal probability of each tag at each token word.

        Parameters
        ----------
        doc : Document

        Returns
        -------
        numpy.ndarray
            ``(n_token_words, len(self.labels))`` float64; row ``i`` is the
            distribution over :attr:`labels` for the ``i``-th token word
            (rows sum to 1, renormalised against rounding).
        """
        return self._run(doc, viterbi=False)[1]

    def predict(self, docs: Sequence[Document] | Iterable[Document]) -> dict[str, Prediction]:
        """Viterbi tags with per-token confidences.

        Parameters
        ----------
        docs : iterable of Document

        Returns
        -------
        dict of str to Prediction
            Per document id: ``tags`` (one tag of :attr:`labels` per token
            word, the most probable sequence) and ``confidences`` (the CRF
            marginal probability of each chosen tag). Tags are not repaired:
            the CRF learns to avoid ``I-X`` after ``O`` or after another type,
            but may still emit it; seqeval's default chunking (and
            :func:`dogood.eval.metrics.entity_scores`) reads it as the start of a
            new ``X`` entity.

        Raises
        ------
        ModelError
            When two documents share an id.
        """
        out: dict[str, Prediction] = {}
        for doc in docs:
            if doc.id in out:
                raise ModelError(f"document id {doc.id!r} given twice: predictions are keyed by id")
            tags, marg = self._run(doc)
            conf = tuple(float(marg[i, self._column[t]]) for i, t in enumerate(tags))
            out[doc.id] = Prediction(doc.id, tags=tuple(tags), confidences=conf)
        return out

    # -- files ------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write the model as one zip file (``model.crfsuite`` + ``meta.json``), atomically.

        The zip is written to a temporary file in the same folder and renamed
        over ``path``, so ``path`` is never left half-written. Member
        timestamps are fixed, so saving the same model twice gives the same
        bytes. Missing parent folders are created.

        Returns
        -------
        pathlib.Path
            ``path``.
        """
        meta = {**self.meta, CHECKSUMS: member_checksums([(MODEL_MEMBER, self.model_bytes)])}
        return write_zip_atomic(path, [(META_MEMBER, json.dumps(meta, indent=2, sort_keys=True).encode("utf-8")),
                                       (MODEL_MEMBER, self.model_bytes)])

    @classmethod
    def load(cls, path: str | Path) -> BaselineTagger:
        """Read a model written by :meth:`save`.

        Raises
        ------
        ModelError
            Naming the file: when it does not exist, is not a zip or is
            corrupt, lacks ``model.crfsuite`` or ``meta.json``, or was written
            with another format or feature version (retrain it then).
        """
        path = Path(path)
        meta, raw = read_model_zip(path, [MODEL_MEMBER], what="baseline model", kind="baseline", format_name=FORMAT_NAME,
                                   hint="train one with `dogood train-baseline`")
        model_bytes = raw[MODEL_MEMBER]
        for key, expected in (("format_version", FORMAT_VERSION), ("feature_version", FEATURE_VERSION)):
            if meta.get(key) != expected:
                raise ModelError(
                    f"baseline model file {path} has {key.replace('_', ' ')} {meta.get(key)!r}, but this dogood "
                    f"reads version {expected}: retrain it with `dogood train-baseline`"
                )
        limit = fs.limits().crf_bytes
        if len(model_bytes) > limit:
            raise ModelError(f"baseline model file {path}: model.crfsuite is {len(model_bytes)} bytes, more than the "
                             f"{limit} dogood opens (a limit of dogood's: set DOGOOD_LIMIT_CRF_BYTES to raise it)")
        try:  # CRFsuite parses in C without checks: only a file that passes (labels bounded too) is given to it
            check_crf_model(model_bytes)
        except CrfFileError as exc:
            raise ModelError(f"baseline model file {path}: model.crfsuite is corrupt or crafted ({exc}): retrain "
                             "it with `dogood train-baseline`") from None
        probe_crf(model_bytes, path)  # and should it still crash the parser, it crashes a child process, not us
        model = cls(model_bytes, meta, source=str(path))
        if list(meta.get("labels") or []) != list(model.labels):
            raise ModelError(
                f"baseline model file {path} is inconsistent: {META_MEMBER} lists labels {meta.get('labels')}, "
                f"the CRF knows {list(model.labels)}"
            )
        return model


#: What the probe's child process runs: open the model from stdin, write every part of it out, tag two items.
_PROBE = """
import os, sys, pycrfsuite
tagger = pycrfsuite.Tagger()
model = sys.stdin.buffer.read()  # kept: the tagger reads from this buffer, it does not copy it
try:
    tagger.open_inmemory(model)
    labels = tagger.labels()
    tagger.dump(os.devnull)
    tagger.set(pycrfsuite.ItemSequence([{"bias": 1.0, "w=the": 1.0}, {"bias": 1.0}]))
    tagger.tag()
    for label in labels:
        tagger.marginal(label, 0)
except Exception:
    sys.exit(3)
"""


def probe_crf(model_bytes: bytes, path: str | Path, timeout: float = 30.0) -> None:
    """Open the CRF model, write out every label, attribute and feature, and tag a two-item sequence in a child
    process first: CRFsuite parses the model in C without bounds checks, and a truncated or crafted file can
    crash the process that parses it (a segmentation fault). A :class:`ModelError` naming ``path`` when the child
    crashes, refuses the model or hangs. (A new interpreter, not a fork: it works from any process, a pool's
    daemonic workers included.)"""
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "PYTHONFAULTHANDLER"}
    try:
        done = subprocess.run([sys.executable, "-c", _PROBE], input=bytes(model_bytes), capture_output=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise ModelError(f"baseline model file {path}: the CRF parser did not finish reading it in {timeout:.0f} s; "
                         "the file is corrupt or crafted: retrain it with `dogood train-baseline`") from None
    if done.returncode != 0:
        how = (f"crashed reading it (signal {-done.returncode})" if done.returncode < 0 else "refused it")
        raise ModelError(f"baseline model file {path}: the CRF parser {how}; the file is corrupt or crafted: "
                         "retrain it with `dogood train-baseline`")


# --------------------------------------------------------------------------- training
class _Trainer(pycrfsuite.Trainer):
    """CRFsuite's trainer, reporting one short line per iteration on stderr when verbose."""

    def on_start(self, log):
        pass

    def on_featgen_progress(self, log, percent):
        pass

    def on_featgen_end(self, log):
        pass

    def on_prepared(self, log):
        pass

    def on_prepare_error(self, log):
        print(log, end="", file=sys.stderr)

    def on_iteration(self, log, info):
        print(f"iteration {info.get('num')}: loss {info.get('loss', float('nan')):.1f}, "
              f"{info.get('active_features')} active features", file=sys.stderr, flush=True)

    def on_optimization_end(self, log):
        pass

    def on_end(self, log):
        pass


def train_baseline(
    docs: Iterable[Document],
    *,
    box_level: str = DEFAULT_BOX_LEVEL,
    c1: float = DEFAULT_C1,
    c2: float = DEFAULT_C2,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    progress: bool = False,
) -> BaselineTagger:
    """Train the CRF baseline on documents with FUNSD entities.

    Parameters
    ----------
    docs : iterable of Document
        Training documents; their gold tags are :func:`dogood.core.schema.iob_tags`.
        Documents without token words are skipped.
    box_level : str
        The boxes the model reads (:func:`token_inputs`): ``segment`` (default) or ``word``, the ``bboxes`` of the
        training split built at that convention, which is the one the model can be evaluated on; ``record``,
        the record's pixel word boxes (the Move shift's scorer).
    c1, c2 : float
        L1 and L2 regularisation coefficients, chosen by 5-fold
        cross-validation on FUNSD train (not on FUNSD test); entity F1 is flat
        (0.733 +- 0.001) for c1 in [0.01, 0.05] and c2 in [0.3, 1].
    max_iterations : int
        L-BFGS iteration cap. With the default, training on all of FUNSD
        train takes 5-15 s on two cores; held-out F1 is flat from about 150
        iterations on (5-fold on FUNSD train: 0.733 at 150 and at 300).
    progress : bool
        Print one line per iteration on stderr.

    Returns
    -------
    BaselineTagger

    Raises
    ------
    ValueError
        When no document has a token word, or a document has entity labels
        outside FUNSD's (header, question, answer, other).
    """
    check_input(box_level)
    if c1 < 0 or c2 < 0:
        raise ValueError(f"c1 and c2 must be non-negative, got {c1}, {c2}")
    if max_iterations < 1:
        raise ValueError(f"max_iterations must be at least 1, got {max_iterations}")
    trainer = _Trainer(verbose=progress)
    trainer.select("lbfgs")
    params = {
        "c1": float(c1),
        "c2": float(c2),
        "max_iterations": int(max_iterations),
        "feature.possible_transitions": True,
    }
    trainer.set_params(params)
    ids: list[str] = []
    n_words = 0
    for doc in docs:
        tags = iob_tags(doc)[1]
        bad = sorted(set(tags) - set(FUNSD_NER_TAGS))
        if bad:
            raise ValueError(f"document {doc.id!r}: tags outside FUNSD's: {', '.join(bad)}")
        ids.append(doc.id)
        if not tags:
            continue
        trainer.append(_items(doc, box_level), tags)
        n_words += len(tags)
    if n_words == 0:
        raise ValueError("no training document has a token word")
    with tempfile.TemporaryDirectory(prefix="dogood-crf-") as tmp:
        model_path = os.path.join(tmp, MODEL_MEMBER)
        trainer.train(model_path)
        model_bytes = fs.read_bytes(model_path, limit="crf_bytes", what="CRF model")
    from dogood.version import __version__

    meta = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "feature_version": FEATURE_VERSION,
        "box_level": box_level,
        "training": {"algorithm": "lbfgs", **params},
        "num_documents": len(ids),
        "num_words": n_words,
        "train_ids_sha256": hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest(),
        "train_ids": list(ids),  # dogood eval warns of an OOD set holding them
        "dogood_version": __version__,
        "crfsuite": "python-crfsuite " + _crfsuite_version(),
    }
    model = BaselineTagger(model_bytes, {**meta, "labels": []})
    model.meta["labels"] = list(model.labels)
    return model


def _crfsuite_version() -> str:
    try:
        from importlib.metadata import version

        return version("python-crfsuite")
    except Exception:  # pragma: no cover - metadata missing in odd installs
        return "unknown"


def default_baseline(train: bool = True) -> BaselineTagger:
    """The Move shift's default scorer: the ``record`` baseline at :func:`~dogood.models.default_baseline_path`,
    trained on FUNSD train and saved there first when missing.

    Move acts on records, so its scorer reads the record's word boxes (``record``); the baselines ``dogood eval``
    scores read a dataset's ``bboxes`` (``dogood train-baseline --box-level``). Training (default parameters, all
    149 FUNSD train forms, 5-15 s) reads FUNSD where :class:`~dogood.sources.funsd.FunsdSource` finds it
    (``$DOGOOD_DATA_DIR`` or the checksummed download). The file is written atomically, so parallel callers never
    read half of it; training is deterministic, so two that both train write the same bytes.
    """
    path = default_baseline_path("record")
    if path.is_file() or not train:
        return BaselineTagger.load(path)
    from dogood.sources.funsd import FunsdSource

    source = FunsdSource(split="train")
    with one_time_step(f"no baseline at {path}: training it on the {len(source.ids())} FUNSD train forms",
                       cached_in=path.parent):
        model = train_baseline((source.load(i) for i in source.ids()), box_level="record")
        model.save(path)
    return BaselineTagger.load(path)
