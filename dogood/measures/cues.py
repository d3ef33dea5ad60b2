"""Cues a shift may leave that a model could learn instead of the shift, each measured by a small classifier.

A shift is meant to change what it names and nothing else a model could pick up. For each kind of cue a cue
test turns pages into labelled samples (features a model could exploit, two classes that should look alike if
the shift left no cue), and :func:`cue_auroc` trains a small classifier (scikit-learn's logistic regression on
standardised features, or gradient boosting) cross-validated *by page* (no page is both trained and scored on)
and reports the area under the ROC curve of its held-out scores: 0.5 means the classes cannot be told apart,
1.0 that they always can. A build measures the cues its configs' shifts declare
(:attr:`dogood.shifts.base.Shift.cues`) on its own pages (:mod:`dogood.pipeline.cue_figures`), and the card
and ``dogood describe`` show them (``docs/isolation.md``).

The cues (:data:`CUES`, by name):

``background``
    background pixels near text against background pixels far from text, on the shifted page: tiles of one
    median word height, off the ink and outside the word boxes, within two word heights of a word box
    (near) or farther than the page's farthest quarter of tiles and three word heights (far), described by
    brightness, saturation and local variance (and each as a difference from the page's median tile); as
    many near as far tiles per page, so the page itself says nothing. A shift that treats the background
    the same wherever the text is (a photo behind the page, a desk under it) scores about 0.5; one that
    marks where the text sits (a pale field around it, a halo) scores higher. On a page the shift moved
    (``capture``), only the paper counts: the source page's outline, carried to the frame by the
    homography that best maps the source's word boxes onto the shifted ones, shrunk by
    :data:`PAPER_INSET`; the surface around a photographed page is not background near or far from text.

``word_style``
    words a text shift redrew (``render: true``) against untouched print of the same kind on the same pages
    (:mod:`dogood.measures.word_style`: redrawn words paired one to one with untouched words of their page
    like them in length, digits, capitals and height), on the print's style: ink darkness, stroke width, x-height,
    slant, edge blur, noise in the strokes and on the paper, specks, ink beside the glyphs, each also against
    the word's neighbours. The figure is the higher of a gradient-boosting and a logistic-regression
    classifier's held-out AUROC (folds split by page), the one ``bench/measure_word_cue.py`` reports. New
    ink that looks like the page's own print scores about 0.5; a crisper, darker or foreign face, higher.

Adding a cue: a function ``(pairs: Sequence[tuple[Document, Document]]) -> CueFigure | float | None`` over
``(original, shifted)`` pages (a bare number is read as an AUROC without an interval), registered in :data:`CUES`
with one line (``CUES["name"] = Cue("what it tells apart", function)``); a shift lists
its name in :attr:`~dogood.shifts.base.Shift.cues`, or :attr:`~dogood.shifts.base.Shift.render_cues` for what
``render: true`` adds. :func:`paged_cue` makes such a function from one that gives one page's samples.

Written here: scikit-learn does the learning and the scoring; no library samples a document page's
background by its distance to the text.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import NamedTuple

import cv2
import numpy as np

from dogood.core.document import Document

__all__ = ["CUES", "Cue", "CueFigure", "background_cue", "background_samples", "check_cues", "cue_auroc", "paged_cue",
           "word_style_cue"]


class CueFigure(NamedTuple):
    """A cue test's outcome: the classifier's cross-validated ``auroc`` (0.5: no cue), over ``samples`` samples
    from ``pages`` pages, and its 95% interval (``low``, ``high``: the held-out scores' pages resampled,
    :data:`BOOTSTRAP` times)."""

    auroc: float
    pages: int
    samples: int
    low: float
    high: float

    def as_dict(self) -> dict:
        """The figure as a build's record keeps it (AUROCs to 4 decimals)."""
        return {"auroc": round(float(self.auroc), 4), "low": round(float(self.low), 4),
                "high": round(float(self.high), 4), "pages": int(self.pages), "samples": int(self.samples)}


#: Folds of the by-page cross-validation (fewer when there are fewer pages).
FOLDS = 5
#: The fewest pages a figure is given for (below: ``None``, too few to cross-validate by page).
MIN_PAGES = 4
#: The cue tests' classifiers: ``logistic`` (standardised features, L2 logistic regression) and ``boosting``
#: (histogram gradient boosting, 100 trees of depth 3 at most, fixed seed).
MODELS = ("logistic", "boosting")
#: Page resamplings of the interval of :class:`CueFigure` (a fixed seed: a build's figures are reproducible).
BOOTSTRAP = 200


def cue_auroc(features: np.ndarray, labels: np.ndarray, groups: np.ndarray, *, model: str = "logistic",
              folds: int = FOLDS) -> CueFigure | None:
    """The AUROC of a classifier telling ``labels`` (0/1) apart from ``features`` (``n x k``), cross-validated by
    ``groups`` (the page of each sample: scikit-learn's ``GroupKFold``, deterministic): each sample is scored
    by a model trained on the other folds' pages, and the held-out scores of all folds make one ROC curve.
    ``None`` with fewer than :data:`MIN_PAGES` pages or one class only."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import GroupKFold, cross_val_predict

    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}, got {model!r}")
    x = np.asarray(features, np.float64)
    y = np.asarray(labels, np.int64).ravel()
    g = np.asarray(groups).ravel()
    pages = len(np.unique(g)) if len(g) else 0
    if pages < MIN_PAGES or len(np.unique(y)) < 2:
        return None
    scores = cross_val_predict(_classifier(model), x, y, groups=g, cv=GroupKFold(n_splits=min(folds, pages)),
                               method="predict_proba")[:, 1]
    low, high = _interval(y, scores, g)
    return CueFigure(float(roc_auc_score(y, scores)), pages, len(y), low, high)


def _interval(y: np.ndarray, scores: np.ndarray, groups: np.ndarray) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles of the AUROC of the held-out ``scores`` over pages drawn with replacement
    (:data:`BOOTSTRAP` draws, seed 0; draws with one class only are left out)."""
    from sklearn.metrics import roc_auc_score

    _, page = np.unique(groups, return_inverse=True)
    order = np.argsort(page, kind="stable")
    starts = np.searchsorted(page[order], np.arange(page.max() + 2))
    rng = np.random.default_rng(0)
    values = []
    for _ in range(BOOTSTRAP):
        drawn = rng.integers(0, page.max() + 1, page.max() + 1)
        index = np.concatenate([order[starts[k] : starts[k + 1]] for k in drawn])
        if len(np.unique(y[index])) == 2:
            values.append(roc_auc_score(y[index], scores[index]))
    if not values:
        return float("nan"), float("nan")
    return float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))


def _classifier(model: str):
    if model == "boosting":
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(max_iter=100, max_depth=3, random_state=0)
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))


PageSamples = Callable[[Document, Document], tuple[np.ndarray, np.ndarray]]


def paged_cue(samples: PageSamples, model: str = "logistic") -> Callable[[Sequence[tuple[Document, Document]]],
                                                                          CueFigure | None]:
    """A cue function over ``(original, shifted)`` pages from ``samples``, which gives one page's ``(features,
    labels)``: the pages' samples pooled, grouped by page, into :func:`cue_auroc`."""

    def cue(pairs: Sequence[tuple[Document, Document]]) -> CueFigure | None:
        xs, ys, gs = [], [], []
        for k, (original, shifted) in enumerate(pairs):
            x, y = samples(original, shifted)
            if len(y):
                xs.append(x)
                ys.append(y)
                gs.append(np.full(len(y), k))
        if not xs:
            return None
        return cue_auroc(np.concatenate(xs), np.concatenate(ys), np.concatenate(gs), model=model)

    cue.__doc__ = samples.__doc__
    return cue


# -- the background cue ---------------------------------------------------------------------------------------------

#: Near tiles lie within this many median word heights of a word box (outside it).
NEAR = 2.0
#: Far tiles lie at least this many median word heights from every word box, and among the page's farthest
#: quarter of tiles.
FAR = 3.0
#: Tiles of each class taken per page, at most (as many near as far).
TILES_PER_CLASS = 32
#: A tile counts when this share of its pixels is background (off the ink, outside the grown word boxes, on the
#: paper).
MIN_BACKGROUND = 0.6
#: Grey levels below the local background (a closing) from which a pixel counts as ink and is left out.
INK_LEVELS = 40
#: Grey levels below the paper from which a pixel of the source page counts as marked (left out where the page
#: did not move).
PAPER_LEVELS = 24
#: The source page's outline carried to a moved page is shrunk towards its centre by this share, so that the
#: paper's edge and the surface next to it are never read as background.
PAPER_INSET = 0.06
#: The features of a background tile, in order (each also as a difference from the page's median tile).
BACKGROUND_FEATURES = ("brightness", "saturation", "local_std", "detail")


def background_samples(original: Document, shifted: Document) -> tuple[np.ndarray, np.ndarray]:
    """One page's samples of the ``background`` cue: ``(features, labels)``, label 1 for a tile near text and 0
    for one far from it (see the module doc); none when the page has fewer than 3 words, or fewer than 4
    near or far tiles, or (a moved page) its paper cannot be found."""
    empty = np.zeros((0, 2 * len(BACKGROUND_FEATURES))), np.zeros(0, np.int64)
    boxes = np.asarray(shifted.boxes, np.int64).reshape(-1, 4)
    if len(boxes) < 3:
        return empty
    pixels = shifted.image.to_array()
    height, width = pixels.shape[:2]
    unit = float(np.clip(np.median(np.minimum(boxes[:, 3] - boxes[:, 1], boxes[:, 2] - boxes[:, 0])), 6, 64))
    paper = paper_mask(original, shifted)
    if paper is None:
        return empty
    luma = pixels if pixels.ndim == 2 else cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY)
    boxed = np.zeros((height, width), np.uint8)
    for x0, y0, x1, y1 in boxes.clip(0, [width, height, width, height]).tolist():
        boxed[y0:y1, x0:x1] = 1
    grow = max(1, int(round(unit / 2)))
    near_box = cv2.dilate(boxed, cv2.getStructuringElement(cv2.MORPH_RECT, (2 * grow + 1, 2 * grow + 1)))
    background = paper & (near_box == 0) & ~_ink(luma, unit)
    if _same_page(original, shifted):  # what the source page has besides paper (ink, shaded bars) lies where it was
        background &= ~_not_paper(original.image.to_array())
    distance = cv2.distanceTransform((boxed == 0).astype(np.uint8), cv2.DIST_L2, 5) / unit
    tile = max(4, int(round(unit)))
    rows, cols = height // tile, width // tile
    if not rows or not cols:
        return empty

    def cells(a):  # per tile, the mean of ``a`` over its pixels
        return a[: rows * tile, : cols * tile].reshape(rows, tile, cols, tile).mean(axis=(1, 3))

    share = cells(background.astype(np.float32))
    where = cells(distance)
    ok = share >= MIN_BACKGROUND
    if not ok.any():
        return empty
    far_from = max(FAR, float(np.quantile(where[ok], 0.75)))
    near = np.flatnonzero((ok & (where <= NEAR)).ravel())
    far = np.flatnonzero((ok & (where >= far_from)).ravel())
    k = min(len(near), len(far), TILES_PER_CLASS)
    if k < 4:
        return empty
    chosen = np.concatenate([near[np.linspace(0, len(near) - 1, k).round().astype(int)],
                             far[np.linspace(0, len(far) - 1, k).round().astype(int)]])
    feats = _tile_features(pixels, luma, background, tile, rows, cols, chosen)
    features = np.concatenate([feats, feats - np.median(feats, axis=0)], axis=1)
    return features, np.repeat(np.array([1, 0]), k)


def _tile_features(pixels, luma, background, tile, rows, cols, chosen) -> np.ndarray:
    """Per chosen tile (flat index in the ``rows x cols`` grid), over its background pixels: mean luma, mean
    saturation (HSV's S, 0-255), luma standard deviation, and mean absolute Laplacian (fine detail)."""
    sat = np.zeros_like(luma) if pixels.ndim == 2 else cv2.cvtColor(pixels, cv2.COLOR_RGB2HSV)[..., 1]
    detail = np.abs(cv2.Laplacian(luma, cv2.CV_32F, ksize=3))
    out = np.zeros((len(chosen), len(BACKGROUND_FEATURES)))
    for n, index in enumerate(chosen.tolist()):
        r, c = divmod(index, cols)
        sl = (slice(r * tile, (r + 1) * tile), slice(c * tile, (c + 1) * tile))
        on = background[sl]
        values = luma[sl][on].astype(np.float64)
        out[n] = (values.mean(), float(sat[sl][on].mean()), values.std(), float(detail[sl][on].mean()))
    return out


def _ink(luma: np.ndarray, unit: float) -> np.ndarray:
    """Pixels :data:`INK_LEVELS` or more darker than a grey-level closing half a word height wide, grown by a
    pixel: ink, and the darkest specks of a photo (left out near and far alike)."""
    k = max(3, int(unit / 2) | 1)
    closed = cv2.morphologyEx(luma, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
    ink = cv2.compare(cv2.subtract(closed, luma), INK_LEVELS, cv2.CMP_GE)
    return cv2.dilate(ink, np.ones((3, 3), np.uint8)) > 0


def _not_paper(pixels: np.ndarray) -> np.ndarray:
    """Pixels of a page :data:`PAPER_LEVELS` or more darker than its paper (the 90th percentile of its luma),
    grown by two pixels: ink, shaded bars, stamps."""
    luma = pixels if pixels.ndim == 2 else cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY)
    paper = float(np.percentile(luma[::4, ::4], 90))
    marked = cv2.compare(luma, max(paper - PAPER_LEVELS, 0), cv2.CMP_LT)
    return cv2.dilate(marked, np.ones((5, 5), np.uint8)) > 0


def _same_page(original: Document, shifted: Document) -> bool:
    """Whether the shifted page lies where the source page did: same size and the same word boxes."""
    return (original.width, original.height) == (shifted.width, shifted.height) and len(original.words) == len(
        shifted.words) and np.array_equal(original.boxes, shifted.boxes)


def paper_mask(original: Document, shifted: Document) -> np.ndarray | None:
    """Boolean ``HxW`` mask of the shifted frame where the source page's paper lies: all of it when the page did
    not move (:func:`_same_page`); else the source's outline carried by the homography from the source's word
    boxes' corners to their counterparts' (paired by text, RANSAC), shrunk by :data:`PAPER_INSET`. ``None``
    with fewer than 4 words paired or no homography."""
    height, width = shifted.height, shifted.width
    if _same_page(original, shifted):
        return np.ones((height, width), bool)
    pairs = _paired_words(original, shifted)
    if len(pairs) < 4:
        return None
    src = np.asarray(original.boxes, np.float64)[[i for i, _ in pairs]]
    dst = np.asarray(shifted.boxes, np.float64)[[j for _, j in pairs]]
    corners = lambda b: np.concatenate([b[:, [0, 1]], b[:, [2, 1]], b[:, [2, 3]], b[:, [0, 3]]])  # noqa: E731
    h, _ = cv2.findHomography(corners(src), corners(dst), cv2.RANSAC, 4.0)
    if h is None:
        return None
    w0, h0 = original.width, original.height
    outline = np.array([[0, 0], [w0, 0], [w0, h0], [0, h0]], np.float64)
    centre = outline.mean(axis=0)
    outline = centre + (outline - centre) * (1 - PAPER_INSET)
    quad = cv2.perspectiveTransform(outline[None], h)[0]
    mask = np.zeros((height, width), np.uint8)
    cv2.fillConvexPoly(mask, np.round(quad).astype(np.int32), 1)
    return mask > 0


def _paired_words(original: Document, shifted: Document) -> list[tuple[int, int]]:
    """``(source index, shifted index)`` of words that correspond: by position when the counts agree, else the
    equal runs of the two texts' alignment (``difflib``)."""
    if len(original.words) == len(shifted.words):
        return list(zip(range(len(original.words)), range(len(shifted.words))))
    matcher = difflib.SequenceMatcher(None, [w.text for w in original.words], [w.text for w in shifted.words],
                                      autojunk=False)
    return [(a.a + k, a.b + k) for a in matcher.get_matching_blocks() for k in range(a.size)]


background_cue = paged_cue(background_samples)


# -- the redrawn-word cue --------------------------------------------------------------------------------------------


def word_style_cue(pairs: Sequence[tuple[Document, Document]]) -> CueFigure | None:
    """The ``word_style`` cue of ``(original, shifted)`` pages: redrawn words against matched untouched print, on
    style features (:func:`dogood.measures.word_style.style_samples`), scored by the better of its two
    classifiers (:func:`dogood.measures.word_style.held_out_scores`), with the interval of :class:`CueFigure`.
    ``None`` with fewer than :data:`dogood.measures.word_style.MIN_WORDS` words of either kind or fewer than
    :data:`MIN_PAGES` pages holding them."""
    from dogood.measures import word_style

    return word_style_figure(*word_style.style_samples(pairs))


def word_style_page_samples(original: Document, shifted: Document) -> tuple[np.ndarray, np.ndarray]:
    """One page's samples of :func:`word_style_cue` (:func:`dogood.measures.word_style.style_samples`)."""
    from dogood.measures import word_style

    x, y, _ = word_style.style_samples([(original, shifted)])
    return x, y


def word_style_figure(x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> CueFigure | None:
    """:func:`word_style_cue`'s figure from its pages' samples (``groups``: the page of each)."""
    from sklearn.metrics import roc_auc_score

    from dogood.measures import word_style

    pages = len(np.unique(groups))
    if min(int((y == 1).sum()), int((y == 0).sum())) < word_style.MIN_WORDS or pages < MIN_PAGES:
        return None
    x = x[:, :len(word_style.FEATURES)]  # the style; where the new text sits in its box follows from its length
    scores = max(word_style.held_out_scores(x, y, groups), key=lambda s: roc_auc_score(y, s))
    low, high = _interval(y, scores, groups)
    return CueFigure(float(roc_auc_score(y, scores)), pages, len(y), low, high)


# -- the registry ---------------------------------------------------------------------------------------------------

class Cue(NamedTuple):
    """A cue test: what it tells apart (``what``, the card's and ``describe``'s words) and the function that
    measures it over ``(original, shifted)`` pages. A test made of one page's samples and a figure from them all
    also gives the two parts (``page_samples``: ``(original, shifted) -> (features, labels)``; ``from_samples``:
    ``(features, labels, pages) -> figure``, equal to ``measure`` on the same pages), so that a build draws the
    pages' samples in its workers (:func:`dogood.pipeline.cue_figures.measure_cues`)."""

    what: str
    measure: Callable[[Sequence[tuple[Document, Document]]], CueFigure | float | None]
    page_samples: PageSamples | None = None
    from_samples: Callable[[np.ndarray, np.ndarray, np.ndarray], CueFigure | float | None] | None = None


#: The cue tests, by the name a shift declares (:attr:`dogood.shifts.base.Shift.cues`).
CUES: dict[str, Cue] = {
    "background": Cue("background near text vs far from text (brightness, saturation, local variance)",
                      background_cue, background_samples, cue_auroc),
    "word_style": Cue("redrawn vs untouched words of the same page (ink darkness, stroke width, x-height, slant, "
                      "edge blur, noise, ink beside the glyphs)", word_style_cue, word_style_page_samples,
                      word_style_figure),
}


def check_cues(names, where: str = "") -> frozenset[str]:
    """``names`` as a frozenset, refusing a name outside :data:`CUES` (``ValueError`` naming ``where``; a string:
    ``TypeError``)."""
    if isinstance(names, str):
        raise TypeError(f"{where}cues must be a set of cue names, not the string {names!r}")
    out = frozenset(names)
    unknown = sorted(out - set(CUES))
    if unknown:
        raise ValueError(f"{where}unknown cue(s) {', '.join(unknown)}; the cues are {', '.join(CUES)}")
    return out
