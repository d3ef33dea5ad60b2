"""dogood's offline document-classification baseline (RVL-CDIP-style): words + page thumbnail, late fusion.

It classifies a page into the 16 RVL-CDIP classes (:data:`dogood.core.schema.RVL_CDIP_CLASSES`)
without a GPU, network or pretrained weights, so that RVL-CDIP-T/L/I1/I2-style
datasets can be scored end to end (``dogood train-baseline --task document``,
then ``dogood eval --model baseline`` on a document-classification ID set).

Two linear models, each a multinomial logistic regression (scikit-learn, L-BFGS,
fixed ``random_state``), fused late by averaging their class probabilities:

Text
    TF-IDF over the page's words (:attr:`Document.words`, lower-cased, tokens of
    two or more word characters; unigrams and bigrams; sublinear tf ``1 + log
    tf``; smoothed idf; rows L2-normalised). A page with no token (no OCR words)
    is classified by the pixel model alone.
Pixels
    The page in grayscale, as ink (``1 - gray / 255``), downscaled with area
    interpolation to a 24 x 32 thumbnail, plus its row (64) and column (48) ink
    profiles: 880 numbers, standardised with the training mean and scale.

A class absent from training gets probability 0. The fitted arrays (vocabulary,
idf, coefficients, intercepts, scaler mean and scale) are stored as ``.npy``
members of one zip file with ``meta.json`` (``format: dogood-doc-baseline``):
no pickled objects, and saving the same model twice gives the same bytes.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from dogood.core import fs
from dogood.core.document import Document
from dogood.core.paths import write_zip_atomic
from dogood.core.schema import RVL_CDIP_CLASSES
from dogood.models.base import ModelError
from dogood.models.model_zip import CHECKSUMS, member_checksums, read_model_zip
from dogood.models.predictions import Prediction

MODEL_NAME = "dogood-doc-baseline"
FORMAT_NAME = "dogood-doc-baseline"
FORMAT_VERSION = 1
META_MEMBER = "meta.json"
THUMB_SIZE = (24, 32)  # width, height
PROFILE_SIZE = (48, 64)  # columns, rows
DEFAULT_C_TEXT = 10.0
DEFAULT_C_PIXELS = 0.1
_TOKEN = re.compile(r"(?u)\b\w\w+\b")
#: The arrays a saved model holds (``<name>.npy`` members); ``vocabulary`` is a unicode array.
ARRAYS = ("vocabulary", "idf", "text_coef", "text_intercept", "pixel_mean", "pixel_scale", "pixel_coef",
          "pixel_intercept")


# --------------------------------------------------------------------------- features
def terms(doc: Document) -> list[str]:
    """The page's unigrams and bigrams: lower-cased tokens of 2+ word characters, in word order."""
    tokens = [t for w in doc.words for t in _TOKEN.findall(w.text.lower())]
    return tokens + [f"{a} {b}" for a, b in zip(tokens, tokens[1:])]


def pixel_features(doc: Document) -> np.ndarray:
    """Thumbnail and row/column ink profiles of the page (float64, 880 values; see the module docstring)."""
    arr = doc.image.to_array()
    if arr.ndim == 3:
        arr = cv2.cvtColor(np.ascontiguousarray(arr), cv2.COLOR_RGB2GRAY)
    ink = 1.0 - arr.astype(np.float32) / 255.0
    thumb = cv2.resize(ink, THUMB_SIZE, interpolation=cv2.INTER_AREA)
    rows = cv2.resize(ink.mean(axis=1, keepdims=True), (1, PROFILE_SIZE[1]), interpolation=cv2.INTER_AREA)
    cols = cv2.resize(ink.mean(axis=0, keepdims=True), (PROFILE_SIZE[0], 1), interpolation=cv2.INTER_AREA)
    return np.concatenate([thumb.ravel(), rows.ravel(), cols.ravel()]).astype(np.float64)


def _tfidf(doc_terms: Sequence[list[str]], column: dict[str, int], idf: np.ndarray) -> np.ndarray:
    """Dense ``(n_docs, n_terms)`` sublinear-tf x idf rows, L2-normalised (unknown terms dropped)."""
    x = np.zeros((len(doc_terms), len(column)), dtype=np.float64)
    for r, ts in enumerate(doc_terms):
        for term, n in Counter(ts).items():
            c = column.get(term)
            if c is not None:
                x[r, c] = 1.0 + math.log(n)
    x *= idf
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def _identity(ts: list[str]) -> list[str]:
    return ts


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _linear_probs(x: np.ndarray, coef: np.ndarray, intercept: np.ndarray) -> np.ndarray:
    """Class probabilities of a multinomial logistic regression (a binary one stores one row of ``coef``)."""
    z = x @ coef.T + intercept
    if coef.shape[0] == 1:
        z = np.hstack([-z, z])
    return _softmax(z)


# --------------------------------------------------------------------------- the model
class DocumentBaseline:
    """A trained document baseline. Build one with :func:`train_document_baseline` or :meth:`load`.

    Attributes
    ----------
    classes : tuple of str
        The classes seen in training, in :data:`RVL_CDIP_CLASSES` order.
    arrays : dict of str to numpy.ndarray
        The fitted arrays (:data:`ARRAYS`); the text arrays are empty when no
        training page had words.
    meta : dict
        What ``meta.json`` holds.
    """

    name = MODEL_NAME
    task = "document"
    #: What it is given: the words' text (not their boxes) and the pixels.
    sees = frozenset({"text", "image"})
    ablations = frozenset({"text", "layout", "image"})  # dogood eval --ablate (it never sees the layout)

    def __init__(self, arrays: dict[str, np.ndarray], meta: dict[str, Any], *, source: str | None = None):
        self.arrays = {k: np.asarray(arrays[k]) for k in ARRAYS}
        self.meta = dict(meta)
        self.source = source
        self.classes = tuple(meta.get("classes") or ())
        self._check()
        self._column = {t: i for i, t in enumerate(self.arrays["vocabulary"].tolist())}
        self._full = np.array([RVL_CDIP_CLASSES.index(c) for c in self.classes])

    def _where(self) -> str:
        return f"document baseline model {self.source}" if self.source else "document baseline model"

    def _check(self) -> None:
        a, k = self.arrays, len(self.classes)
        bad = [c for c in self.classes if c not in RVL_CDIP_CLASSES]
        if bad or k < 2 or len(set(self.classes)) != k:
            raise ModelError(f"{self._where()}: classes must be 2+ distinct RVL-CDIP classes, got {list(self.classes)}")
        rows = 1 if k == 2 else k
        v, p = a["vocabulary"].shape, a["pixel_mean"].shape
        expected = {
            "vocabulary": v, "idf": v, "text_coef": (rows if v[0] else 0, v[0]), "text_intercept": (rows if v[0] else 0,),
            "pixel_mean": p, "pixel_scale": p, "pixel_coef": (rows, p[0]), "pixel_intercept": (rows,),
        }
        for name, shape in expected.items():
            if a[name].shape != shape or (name != "vocabulary" and a[name].dtype != np.float64):
                raise ModelError(f"{self._where()}: array {name} has shape {a[name].shape} and type {a[name].dtype}, "
                                 f"expected {shape} float64")
            if name != "vocabulary" and not np.isfinite(a[name]).all():
                raise ModelError(f"{self._where()}: array {name} holds non-finite values")
        if a["vocabulary"].size and a["vocabulary"].dtype.kind != "U":
            raise ModelError(f"{self._where()}: the vocabulary is not an array of strings")
        if p[0] != THUMB_SIZE[0] * THUMB_SIZE[1] + sum(PROFILE_SIZE):
            raise ModelError(f"{self._where()}: {p[0]} pixel features, this dogood makes "
                             f"{THUMB_SIZE[0] * THUMB_SIZE[1] + sum(PROFILE_SIZE)}")

    def __repr__(self) -> str:
        return (f"DocumentBaseline({self.source or '<in memory>'}, {len(self.classes)} classes, "
                f"{len(self._column)} terms, {self.meta.get('num_documents')} training documents)")

    # -- inference --------------------------------------------------------------
    def probabilities(self, docs: Sequence[Document]) -> np.ndarray:
        """``(len(docs), 16)`` class probabilities in :data:`RVL_CDIP_CLASSES` order (0 for untrained classes)."""
        a = self.arrays
        pix = np.stack([pixel_features(d) for d in docs]) if docs else np.zeros((0, a["pixel_mean"].size))
        probs = _linear_probs((pix - a["pixel_mean"]) / a["pixel_scale"], a["pixel_coef"], a["pixel_intercept"])
        if self._column:
            doc_terms = [terms(d) for d in docs]
            x = _tfidf(doc_terms, self._column, a["idf"])
            has_text = np.array([bool(ts) for ts in doc_terms], dtype=bool)
            text = _linear_probs(x, a["text_coef"], a["text_intercept"])
            probs = np.where(has_text[:, None], (probs + text) / 2, probs)
        out = np.zeros((len(docs), len(RVL_CDIP_CLASSES)))
        out[:, self._full] = probs
        return out

    def predict(self, docs: Sequence[Document] | Iterable[Document], batch_size: int = 256) -> dict[str, Prediction]:
        """Per document id: ``label`` (the most probable class) and ``confidence`` (its fused probability)."""
        out: dict[str, Prediction] = {}
        batch: list[Document] = []

        def flush():
            probs = self.probabilities(batch)
            for doc, row in zip(batch, probs):
                k = int(row.argmax())
                out[doc.id] = Prediction(doc.id, label=RVL_CDIP_CLASSES[k], confidence=float(row[k]))
            batch.clear()

        seen: set[str] = set()
        for doc in docs:
            if doc.id in seen:
                raise ModelError(f"document id {doc.id!r} given twice: predictions are keyed by id")
            seen.add(doc.id)
            batch.append(doc)
            if len(batch) >= batch_size:
                flush()
        if batch:
            flush()
        return out

    # -- files ------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write the model as one zip (``meta.json`` + one ``.npy`` per array), atomically and byte-deterministically."""
        arrays = []
        for name in ARRAYS:
            buf = io.BytesIO()
            np.save(buf, self.arrays[name], allow_pickle=False)
            arrays.append((f"{name}.npy", buf.getvalue()))
        meta = {**self.meta, CHECKSUMS: member_checksums(arrays)}  # checked before any array is parsed
        return write_zip_atomic(path, [(META_MEMBER, json.dumps(meta, indent=2, sort_keys=True).encode("utf-8")),
                                       *arrays])

    @classmethod
    def load(cls, path: str | Path) -> DocumentBaseline:
        """Read a model written by :meth:`save`; a :class:`ModelError` naming the file when it is not one."""
        path = Path(path)
        meta, raw = read_model_zip(path, [f"{n}.npy" for n in ARRAYS], what="document baseline model",
                                   kind="document baseline", format_name=FORMAT_NAME,
                                   hint="train one with `dogood train-baseline --task document`")
        if meta.get("format_version") != FORMAT_VERSION:
            raise ModelError(f"document baseline model file {path} has format version {meta.get('format_version')!r}, "
                             f"but this dogood reads version {FORMAT_VERSION}: retrain it")
        if not isinstance(meta.get("classes"), list) or not all(isinstance(c, str) for c in meta["classes"]):
            raise ModelError(f"document baseline model file {path}: {META_MEMBER} lacks its list of classes")
        arrays = {}
        for name in ARRAYS:
            try:  # the header checked before the array is allocated (a declared 2^40 values is refused)
                arrays[name] = fs.parse_npy(raw[f"{name}.npy"], where=path, what=f"{name}.npy",
                                            dtypes="fU" if name == "vocabulary" else "f")
            except fs.FileRefused as exc:
                raise ModelError(f"document baseline model file {path}: {name}.npy is not a valid array "
                                 f"({exc.reason})") from None
        return cls(arrays, meta, source=str(path))


# --------------------------------------------------------------------------- training
def train_document_baseline(
    docs: Iterable[Document], *, c_text: float = DEFAULT_C_TEXT, c_pixels: float = DEFAULT_C_PIXELS,
    min_df: int = 2, max_terms: int = 50000, max_iterations: int = 300,
) -> DocumentBaseline:
    """Fit the document baseline on labelled pages (RVL-CDIP classes).

    Parameters
    ----------
    docs : iterable of Document
        Training pages; each needs ``label`` (an RVL-CDIP class) and an image.
    c_text, c_pixels : float
        Inverse L2 regularisation of the text and pixel logistic regressions.
    min_df : int
        Keep terms found on at least this many training pages.
    max_terms : int
        Keep at most this many terms (the most frequent).
    max_iterations : int
        L-BFGS iteration cap of each regression.

    Raises
    ------
    ValueError
        When a page has no label or one outside RVL-CDIP's, or fewer than two
        classes are present.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    ids: list[str] = []
    labels: list[str] = []
    pix: list[np.ndarray] = []
    doc_terms: list[list[str]] = []
    for doc in docs:
        if doc.label not in RVL_CDIP_CLASSES:
            raise ValueError(f"document {doc.id!r}: label {doc.label!r} is not an RVL-CDIP class")
        ids.append(doc.id)
        labels.append(doc.label)
        pix.append(pixel_features(doc))
        doc_terms.append(terms(doc))
    classes = [c for c in RVL_CDIP_CLASSES if c in set(labels)]
    if len(classes) < 2:
        raise ValueError(f"training needs pages of at least two classes, got {classes or 'none'}")
    y = np.array([classes.index(c) for c in labels])

    def fit(x: np.ndarray, yy: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray]:
        lr = LogisticRegression(C=c, max_iter=max_iterations, random_state=0)
        lr.fit(x, yy)
        coef, intercept = lr.coef_.astype(np.float64), lr.intercept_.astype(np.float64)
        return coef, intercept

    scaler = StandardScaler().fit(np.stack(pix))
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0).astype(np.float64)
    mean = scaler.mean_.astype(np.float64)
    pixel_coef, pixel_intercept = fit((np.stack(pix) - mean) / scale, y, c_pixels)

    with_text = [i for i, ts in enumerate(doc_terms) if ts]
    vocabulary, idf = np.array([], dtype="<U1"), np.zeros(0)
    text_coef, text_intercept = np.zeros((0, 0)), np.zeros(0)
    if len(set(y[with_text].tolist())) == len(classes):
        vec = TfidfVectorizer(analyzer=_identity, sublinear_tf=True, min_df=min_df, max_features=max_terms)
        try:
            vec.fit([doc_terms[i] for i in with_text])
        except ValueError:  # every term below min_df
            vec = None
        if vec is not None:
            order = sorted(vec.vocabulary_, key=vec.vocabulary_.get)
            vocabulary = np.array(order, dtype=str)
            idf = vec.idf_.astype(np.float64)
            x = vec.transform([doc_terms[i] for i in with_text])  # sparse; the same rows as _tfidf
            text_coef, text_intercept = fit(x, y[with_text], c_text)
    from dogood.version import __version__

    meta = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "kind": "document",
        "classes": classes,
        "features": {"thumbnail": list(THUMB_SIZE), "profiles": list(PROFILE_SIZE), "text": "tfidf 1-2 grams sublinear"},
        "training": {"algorithm": "logistic regression (lbfgs)", "c_text": c_text, "c_pixels": c_pixels,
                     "min_df": min_df, "max_terms": max_terms, "max_iterations": max_iterations, "random_state": 0},
        "num_documents": len(ids),
        "num_documents_with_text": len(with_text),
        "num_terms": int(vocabulary.size),
        "train_ids_sha256": hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest(),
        "train_ids": list(ids),  # dogood eval warns of an OOD set holding them
        "dogood_version": __version__,
    }
    arrays = {"vocabulary": vocabulary, "idf": idf, "text_coef": text_coef, "text_intercept": text_intercept,
              "pixel_mean": mean, "pixel_scale": scale, "pixel_coef": pixel_coef, "pixel_intercept": pixel_intercept}
    return DocumentBaseline(arrays, meta)
