"""Can a small classifier tell a redrawn word from a printed one? The redrawn-word cue (issue 40).

A text shift with ``render: true`` erases a word's ink and draws its new
text (:mod:`dogood.page.render`). If the new ink looks unlike the page's own
print (another face, crisper edges, no scanner noise, stray old ink beside
it, smaller type), a model trained on the shifted set can find the changed
words by their look instead of reading them: a cue the shift was not meant
to teach. This module measures it.

:func:`word_features` describes each word box by what a vision model could
exploit in its style, not its text (:data:`STYLE`, the list of issue 40):
ink darkness and the paper's level, stroke width and boldness (the share
of stroke core), x-height (the band of rows holding most of the ink), slant,
edge blur (grey pixels per edge pixel, edge steepness), noise on the paper
and inside the strokes, specks, and ink around the box that belongs to no
stroke of the word nor to another word's box (old ink left beside the new). Each is also given
against the median of the word's nearest neighbours of about its height
(``_vs_near``): a word crisper or darker than the print around it. The ink
is the box's pixels darker than its Otsu threshold, without form rules
(runs longer than a glyph's stroke), which are the form's, not the word's
print. Where the ink sits in its box and how it fills it (the gaps at each
side, its width, height and density, strokes crossing the box's edge:
:data:`PLACEMENT`) mostly follows from the new text's length in the box the
shift kept, not from the drawing (a deleted letter leaves room at the right,
an inserted one needs squeezing), and is scored apart (``placement``).

:func:`redrawn_word_cue` compares redrawn words with words nobody touched,
on the same pages. A word is redrawn when pixels in its box changed. By
default (``against="matched"``) redrawn words are paired one to one with
untouched words of their page like them in text and box (as long within
:data:`MATCH_LENGTH`, as tall within :data:`MATCH_HEIGHT`, a number with a
number; the pairing nearest in length, shares of digits and capitals and
height in all), taken from the print the shift could have redrawn
(:func:`dogood.page.render.print_kinds`: not the handwriting it keeps), so
that what the shift picks (numbers, long words) cannot pass for a cue: a
redrawn word with no such untouched word left is not compared (a shift that
changes four words in five leaves the shortest as its fifth).
``against="untouched"`` takes every such untouched word, and
``against="original"`` the same word as the source page printed it (same
box: its old text in its own print). A gradient-boosting and a logistic-regression classifier
(scikit-learn) are trained and scored by cross-validation with the folds
split by page (a page's words never sit on both sides), and the cue is the
higher of their out-of-fold AUROCs: 0.5 is no cue, 1.0 a word that gives
itself away. Each feature's own AUROC says which look gives it away.

Written by hand: no library describes the print style of word crops; the
classifiers and the AUROC are scikit-learn's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

import cv2
import numpy as np

from dogood.core.document import Document

#: What :func:`_raw` measures of a word box, in its order.
MEASURED = ("ink_level", "paper_level", "ink_density", "stroke_width", "core_share", "edge_grey", "edge_steepness",
            "paper_noise", "ink_noise", "specks", "gap_top", "gap_bottom", "gap_left", "ink_band", "ink_height", "slant",
            "ink_out_joined", "ink_out_free", "ink_cut", "gap_right", "ink_width")
#: The style a vision model could tell a redrawn word by (issue 40's list: ink darkness, stroke width, x-height,
#: slant, edge blur, noise inside the box, ink outside the new glyphs), each also against the word's neighbours.
STYLE = ("ink_level", "paper_level", "stroke_width", "core_share", "edge_grey", "edge_steepness", "paper_noise",
         "ink_noise", "specks", "ink_band", "slant", "ink_out_free")
#: Where the ink sits in its box and how it fills it: mostly the new text's length in the box the shift kept (a
#: deleted letter leaves room at the right, an inserted one needs squeezing), scored apart.
PLACEMENT = ("ink_density", "gap_top", "gap_bottom", "gap_left", "gap_right", "ink_width", "ink_height",
             "ink_out_joined", "ink_cut")
#: The style columns :func:`word_features` gives first (the cue's), then :data:`PLACEMENT`.
FEATURES = STYLE + tuple(f"{name}_vs_near" for name in STYLE)
#: Pixels around another word's box that count as its print (FUNSD boxes are often a pixel or two tighter than
#: their glyphs), not as ink left beside the word measured (``ink_out_free``).
OTHERS_GROW = 2
#: Neighbours a word is compared with.
NEIGHBOURS = 8
#: What redrawn words are compared with (:func:`redrawn_word_cue`).
AGAINST = ("matched", "original", "untouched")
#: Weights of length (in threes of characters), share of digits and share of capitals when pairing words alike
#: (:func:`_matched`).
MATCH_WEIGHTS = np.array([1.0, 3.0, 1.0])
#: How many more or fewer characters (a share of the redrawn word's, at least one) and how much taller or shorter
#: (a factor) an untouched word may be and still be paired with a redrawn one (:func:`_matched`).
MATCH_LENGTH = 0.2
MATCH_HEIGHT = 1.25
#: The distance of a pair :func:`_matched` never makes.
UNLIKE = 1e6
#: Fewest redrawn and untouched words (each) for a cue figure.
MIN_WORDS = 20
#: A box whose grey levels span less than this holds no ink (it is left out).
MIN_CONTRAST = 40


class WordCue(NamedTuple):
    """The cue of redrawn words: ``auroc`` (the higher of the two classifiers'; NaN with too few words),
    ``boosting`` and ``logistic`` (each classifier's out-of-fold AUROC), ``placement`` (the higher of the two on
    :data:`PLACEMENT` alone: where the new text sits in the box it kept, and how it fills it), ``redrawn`` and
    ``untouched`` (words compared), ``pages``, and ``by_feature`` (each feature's own AUROC, folded above 0.5,
    strongest first)."""

    auroc: float
    boosting: float
    logistic: float
    placement: float
    redrawn: int
    untouched: int
    pages: int
    by_feature: dict[str, float]


def _gray(pixels: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(np.ascontiguousarray(pixels), cv2.COLOR_RGB2GRAY) if pixels.ndim == 3 else pixels


def _raw(gray: np.ndarray, box, others: np.ndarray | None = None) -> np.ndarray | None:
    """The :data:`MEASURED` features of ``box`` on page ``gray``, or ``None`` for a box without ink; ``others``:
    the page's other word boxes (their print, grown by :data:`OTHERS_GROW`, is no ink left beside this word)."""
    height, width = gray.shape
    x0, y0, x1, y1 = (int(v) for v in box)
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(width, x1), min(height, y1)
    h, w = y1 - y0, x1 - x0
    if h < 4 or w < 2:
        return None
    pad = max(2, int(round(h / 3)))
    cx0, cy0, cx1, cy1 = max(0, x0 - pad), max(0, y0 - pad), min(width, x1 + pad), min(height, y1 + pad)
    ctx = gray[cy0:cy1, cx0:cx1]
    bx0, by0 = x0 - cx0, y0 - cy0
    crop = ctx[by0:by0 + h, bx0:bx0 + w]
    lo, hi = np.percentile(crop, [2, 98])
    if hi - lo < MIN_CONTRAST:
        return None
    threshold, _ = cv2.threshold(np.ascontiguousarray(crop), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    dark = (ctx <= threshold).astype(np.uint8)
    # form rules and underlines (runs too long for a glyph stroke) are the form's, not the word's print
    rules = (cv2.morphologyEx(dark, cv2.MORPH_OPEN, np.ones((1, max(15, int(1.5 * h))), np.uint8))
             | cv2.morphologyEx(dark, cv2.MORPH_OPEN, np.ones((max(6, int(1.5 * h)), 1), np.uint8))) > 0
    ink_ctx = (dark > 0) & ~rules
    ink = ink_ctx[by0:by0 + h, bx0:bx0 + w]
    n_ink = int(ink.sum())
    if n_ink < 4:
        return None
    near_ink = cv2.dilate(dark, np.ones((5, 5), np.uint8)) > 0
    paper_px = ctx[~near_ink]
    paper = float(np.median(paper_px)) if paper_px.size else float(hi)
    values = np.sort(crop[ink].astype(np.float64))
    ink_level = float(np.median(values[:max(1, len(values) // 2)]))
    contrast = max(paper - ink_level, 1.0)
    norm = np.clip((crop.astype(np.float64) - ink_level) / contrast, 0, 1)  # 0 ink, 1 paper
    eroded = cv2.erode(ink.astype(np.uint8), np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], np.uint8)) > 0
    boundary = ink & ~eroded
    n_edge = max(1, int(boundary.sum()))
    mid = (norm > 0.2) & (norm < 0.8)
    gy, gx = np.gradient(norm)
    steep = float(np.hypot(gx, gy)[mid].mean()) if mid.any() else 1.0
    far = ~(cv2.dilate(dark[by0:by0 + h, bx0:bx0 + w], np.ones((5, 5), np.uint8)) > 0)
    paper_noise = float(crop[far].std()) / contrast if far.sum() >= 4 else 0.0
    core = crop[eroded]
    ink_noise = float(core.std()) / contrast if core.size >= 4 else 0.0
    count, labels, stats, _ = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    specks = float((stats[1:, cv2.CC_STAT_AREA] <= 2).sum()) * 100.0 / (h * w)
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    mass = np.cumsum(ink.sum(axis=1)) / n_ink
    band = (int(np.searchsorted(mass, 0.9)) - int(np.searchsorted(mass, 0.1)) + 1) / h
    ys, xs = np.nonzero(ink)
    dy, dx = ys - ys.mean(), xs - xs.mean()
    mu02 = float((dy * dy).mean())
    slant = float(np.clip((dx * dy).mean() / mu02, -2, 2)) if mu02 > 0 else 0.0
    # ink around the box: joined to the word's strokes (a stroke running out of the box, old ink left over), or not
    count, labels = cv2.connectedComponents(ink_ctx.astype(np.uint8), connectivity=8)
    inside = np.zeros(ctx.shape, bool)
    inside[by0:by0 + h, bx0:bx0 + w] = True
    joined_labels = np.unique(labels[inside & ink_ctx])
    joined = np.isin(labels, joined_labels[joined_labels > 0]) & ~inside
    free = ink_ctx & ~inside & ~joined
    if others is not None and len(others):  # another word's print is its own, not ink left beside this word
        grow = OTHERS_GROW
        near = others[(others[:, 0] < cx1 + grow) & (others[:, 2] > cx0 - grow) & (others[:, 1] < cy1 + grow)
                      & (others[:, 3] > cy0 - grow)]
        for ox0, oy0, ox1, oy1 in near.tolist():
            free[max(0, int(oy0) - grow - cy0):max(0, int(oy1) + grow - cy0),
                 max(0, int(ox0) - grow - cx0):max(0, int(ox1) + grow - cx0)] = False
    perimeter = 2.0 * (h + w)
    cut = int(ink[0].sum() + ink[-1].sum() + ink[:, 0].sum() + ink[:, -1].sum())
    return np.array([
        ink_level, paper, n_ink / (h * w), n_ink / n_edge, float(eroded.sum()) / n_ink, float(mid.sum()) / n_edge,
        steep, paper_noise, ink_noise, specks, rows[0] / h, (h - 1 - rows[-1]) / h, cols[0] / h, band,
        (rows[-1] - rows[0] + 1) / h, slant, joined.sum() / perimeter, free.sum() / perimeter, cut / perimeter,
        (w - 1 - cols[-1]) / h, (cols[-1] - cols[0] + 1) / w], np.float64)


def word_features(doc: Document, indices: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:data:`FEATURES` then :data:`PLACEMENT` of words ``indices`` of ``doc`` (default: all), and which have ink.

    Returns ``(features, ok)``: an ``(n, len(FEATURES) + len(PLACEMENT))`` array (rows of words without ink are
    NaN) and a boolean mask of the words with ink. The ``_vs_near`` columns compare a word with the
    :data:`NEIGHBOURS` words nearest to it (of box height within a factor 1.5) among all of the page's words
    with ink.
    """
    gray = _gray(doc.image.to_array())
    boxes = np.array([w.box for w in doc.words], np.float64).reshape(-1, 4)
    raw = np.full((len(doc.words), len(MEASURED)), np.nan)
    for j, word in enumerate(doc.words):
        found = _raw(gray, word.box, np.delete(boxes, j, axis=0)) if word.text.strip() else None
        if found is not None:
            raw[j] = found
    has = ~np.isnan(raw[:, 0])
    wanted = list(range(len(doc.words))) if indices is None else [int(i) for i in indices]
    out = np.full((len(wanted), len(FEATURES) + len(PLACEMENT)), np.nan)
    style = [MEASURED.index(name) for name in STYLE]
    placement = [MEASURED.index(name) for name in PLACEMENT]
    centres = np.c_[(boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2]
    heights = np.maximum(boxes[:, 3] - boxes[:, 1], 1)
    others = np.flatnonzero(has)
    n = len(STYLE)
    for row, i in enumerate(wanted):
        if not has[i]:
            continue
        out[row, :n] = raw[i, style]
        out[row, len(FEATURES):] = raw[i, placement]
        pool = others[(others != i) & (heights[others] <= 1.5 * heights[i]) & (heights[others] >= heights[i] / 1.5)]
        if not pool.size:
            out[row, n:len(FEATURES)] = 0.0
            continue
        d = np.hypot(centres[pool, 0] - centres[i, 0], 2 * (centres[pool, 1] - centres[i, 1]))
        near = pool[np.argsort(d, kind="stable")[:NEIGHBOURS]]
        out[row, n:len(FEATURES)] = raw[i, style] - np.median(raw[near][:, style], axis=0)
    return out, has[wanted] if len(wanted) else np.zeros(0, bool)


def redrawn_words(original: Document, shifted: Document) -> tuple[list[int], list[int]]:
    """Words of ``shifted`` whose box pixels differ from ``original``'s (redrawn), and those whose box pixels are
    the same (untouched); words with blank text or empty boxes are in neither. Pages of different sizes: neither."""
    a, b = original.image.to_array(), shifted.image.to_array()
    if a.shape != b.shape:
        return [], []
    diff = a != b
    if diff.ndim == 3:
        diff = diff.any(axis=2)
    height, width = diff.shape
    redrawn, untouched = [], []
    for i, word in enumerate(shifted.words):
        x0, y0, x1, y1 = (int(v) for v in word.box)
        x0, y0, x1, y1 = max(0, x0), max(0, y0), min(width, x1), min(height, y1)
        if x1 <= x0 or y1 <= y0 or not word.text.strip():
            continue
        (redrawn if diff[y0:y1, x0:x1].any() else untouched).append(i)
    return redrawn, untouched


def style_samples(pages: Iterable[tuple[Document, Document]], *, against: str = "matched"
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, labels (1 redrawn, 0 untouched) and page numbers of the words :func:`redrawn_word_cue` compares,
    from ``(original, shifted)`` page pairs (``against``: see :func:`redrawn_word_cue`)."""
    if against not in AGAINST:
        raise ValueError(f"against must be one of {', '.join(AGAINST)}, got {against!r}")
    xs, ys, groups = [], [], []
    for page, (original, shifted) in enumerate(pages):
        redrawn, untouched = redrawn_words(original, shifted)
        if not redrawn:
            continue
        feats, ok = word_features(shifted)
        pos_ids = [i for i in redrawn if ok[i]]
        where = {tuple(w.box): j for j, w in enumerate(original.words) if w.text.strip()}
        if against == "original":  # the same word as the source page printed it: same box
            base, base_ok = word_features(original)
            pairs = [(i, where[tuple(shifted.words[i].box)]) for i in pos_ids if tuple(shifted.words[i].box) in where]
            pairs = [(i, j) for i, j in pairs if base_ok[j]]
            pos, neg = feats[[i for i, _ in pairs]], base[[j for _, j in pairs]]
        else:  # print the shift could have redrawn: what the renderer keeps as printed is no fair comparison
            from dogood.page.render import print_kinds

            pool = [i for i in untouched if ok[i] and tuple(shifted.words[i].box) in where]
            kinds = print_kinds(original, [where[tuple(shifted.words[i].box)] for i in pool], original)
            pool = [i for i in pool if kinds[where[tuple(shifted.words[i].box)]].reason is None]
            if against == "untouched":
                chosen = pool
            else:
                paired = _matched(shifted, pos_ids, pool)
                pos_ids, chosen = [i for i, _ in paired], [j for _, j in paired]
            pos = feats[pos_ids]
            neg = feats[chosen] if chosen else np.zeros((0, feats.shape[1]))
        for block, label in ((pos, 1), (neg, 0)):
            if len(block):
                xs.append(block)
                ys.append(np.full(len(block), label))
                groups.append(np.full(len(block), page))
    if not xs:
        return np.zeros((0, len(FEATURES) + len(PLACEMENT))), np.zeros(0, int), np.zeros(0, int)
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(groups)


def _describe(doc: Document, i: int) -> np.ndarray:
    """What a word's text and box are like, for matching: length, share of digits, share of capitals, height."""
    text = doc.words[i].text.strip()
    n = max(1, len(text))
    x0, y0, x1, y1 = doc.words[i].box
    return np.array([len(text) / 3.0, sum(c.isdigit() for c in text) / n, sum(c.isupper() for c in text) / n,
                     float(y1 - y0)])


def _kind(described: np.ndarray) -> tuple[bool, bool]:
    """A word's kind of characters: mostly digits, mostly capitals (a number is matched with a number first)."""
    return bool(described[1] > 0.5), bool(described[2] > 0.5)


def _matched(doc: Document, redrawn: Sequence[int], pool: Sequence[int]) -> list[tuple[int, int]]:
    """Pairs ``(redrawn word, untouched word of pool)``, each word in one pair at most, alike: of the same kind
    (:func:`_kind`: mostly digits, mostly capitals), as long within :data:`MATCH_LENGTH` (one character at
    least) and as tall within :data:`MATCH_HEIGHT`; of those, the pairing nearest in length, shares of digits
    and capitals and height (:func:`_describe`, heights compared relatively) in all (SciPy's
    ``linear_sum_assignment``). Where the shift redrew more words than the page left untouched, only as many
    redrawn words as untouched ones are paired (the nearest in all): an untouched word paired with many redrawn
    ones would weigh the few odd words a shift leaves (the shortest) as much as all it changed."""
    from scipy.optimize import linear_sum_assignment

    if not pool or not redrawn:
        return []
    a = np.array([_describe(doc, i) for i in redrawn])
    b = np.array([_describe(doc, j) for j in pool])
    kind_a = np.array([_kind(row) for row in a])
    kind_b = np.array([_kind(row) for row in b])
    cost = (np.abs(a[:, None, :3] - b[None, :, :3]) * MATCH_WEIGHTS).sum(axis=2) \
        + np.abs(a[:, None, 3] - b[None, :, 3]) / np.maximum(a[:, None, 3], 1.0)
    length_a, length_b = a[:, 0] * 3.0, b[:, 0] * 3.0  # characters
    longer = np.abs(length_a[:, None] - length_b[None, :]) > np.maximum(1.0, MATCH_LENGTH * length_a[:, None]) + 1e-9
    taller = np.abs(np.log(np.maximum(a[:, None, 3], 1.0) / np.maximum(b[None, :, 3], 1.0))) > np.log(MATCH_HEIGHT)
    unlike = longer | taller | (kind_a[:, None, :] != kind_b[None, :, :]).any(axis=2)
    cost = np.where(unlike, UNLIKE, cost)
    rows, cols = linear_sum_assignment(cost)
    return sorted((int(redrawn[r]), int(pool[c])) for r, c in zip(rows, cols) if cost[r, c] < UNLIKE)


def cue_auroc(x: np.ndarray, y: np.ndarray, groups: np.ndarray, *, folds: int = 5, seed: int = 0
              ) -> tuple[float, float]:
    """Out-of-fold AUROC of a gradient-boosting and a logistic-regression classifier telling ``y`` from ``x``,
    the folds split by ``groups`` (:func:`held_out_scores`)."""
    from sklearn.metrics import roc_auc_score

    boosting, logistic = held_out_scores(x, y, groups, folds=folds, seed=seed)
    return float(roc_auc_score(y, boosting)), float(roc_auc_score(y, logistic))


def held_out_scores(x: np.ndarray, y: np.ndarray, groups: np.ndarray, *, folds: int = 5, seed: int = 0
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The out-of-fold scores of a gradient-boosting and a logistic-regression classifier telling ``y`` from
    ``x``, the folds split by ``groups`` (scikit-learn's ``StratifiedGroupKFold``; each class weighted alike)."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedGroupKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from threadpoolctl import threadpool_limits

    folds = min(folds, len(np.unique(groups)))
    split = StratifiedGroupKFold(n_splits=folds, shuffle=True, random_state=seed)
    made = {
        "boosting": lambda: HistGradientBoostingClassifier(max_iter=150, max_depth=3, learning_rate=0.1,
                                                           class_weight="balanced", random_state=seed),
        "logistic": lambda: make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000,
                                                                               class_weight="balanced")),
    }
    out = []
    with threadpool_limits(limits=1):  # a few thousand words: one thread is fastest, and the same everywhere
        for make in made.values():
            scores = np.zeros(len(y))
            for train, test in split.split(x, y, groups):
                model = make().fit(x[train], y[train])
                scores[test] = model.predict_proba(x[test])[:, 1]
            out.append(scores)
    return out[0], out[1]


def redrawn_word_cue(pages: Iterable[tuple[Document, Document]], *, against: str = "matched", folds: int = 5,
                     seed: int = 0) -> WordCue:
    """The redrawn-word cue of ``(original, shifted)`` page pairs: pages before and after a text shift with
    ``render: true`` (see the module docstring). ``against``: ``matched`` (default), ``untouched`` or
    ``original``; ``folds``: cross-validation folds (split by page); ``seed``: the folds' shuffle. NaN figures
    when fewer than :data:`MIN_WORDS` words of either kind or fewer than two pages hold them."""
    from sklearn.metrics import roc_auc_score

    pages = list(pages)
    x, y, groups = style_samples(pages, against=against)
    n_pos, n_neg = int((y == 1).sum()), int((y == 0).sum())
    n_pages = len(np.unique(groups))
    if n_pos < MIN_WORDS or n_neg < MIN_WORDS or n_pages < 2:
        nan = float("nan")
        return WordCue(nan, nan, nan, nan, n_pos, n_neg, n_pages, {})
    style = len(FEATURES)
    boosting, logistic = cue_auroc(x[:, :style], y, groups, folds=folds, seed=seed)
    placement = max(cue_auroc(x[:, style:], y, groups, folds=folds, seed=seed))
    by_feature = {}
    for k, name in enumerate(FEATURES + PLACEMENT):
        auc = float(roc_auc_score(y, x[:, k]))
        by_feature[name] = max(auc, 1 - auc)
    by_feature = dict(sorted(by_feature.items(), key=lambda kv: -kv[1]))
    return WordCue(max(boosting, logistic), boosting, logistic, placement, n_pos, n_neg, n_pages, by_feature)
