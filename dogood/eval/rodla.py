"""RoDLA's robustness figures (Chen et al., CVPR 2024, arXiv 2403.14442), **reconstructed**: each reading the
sources allow, side by side, none verified against the paper's equations (which could not be read here).

What the sources say:

- RoDLA's code (``perturbation/evaluation_methods.py`` of github.com/yufanchen96/RoDLA) measures each perturbed
  page against its clean page by PSNR, MS-SSIM and CW-SSIM (pyiqa's ``ms_ssim`` and ``CW_SSIM``: 4 levels and 8
  orientations of a complex steerable pyramid, the coarsest level's bands, 7x7 windows, ``K = 0``, on the luma of
  the pages; a page of another size resized to the clean page's), and averages each over the pages of a
  perturbation level. It does not combine them into mPE.
- Its issue #4 (not contradicted by the authors) reads mPE as combining MS-SSIM, CW-SSIM and the degradation.
- Its issue #6 (the authors): mRD compares each perturbation's result with the clean baseline by the paper's
  formula; a single perturbation's figure is the mean over its three levels; P-Avg is the mean mAP over the
  perturbation types.

So, per perturbation ``p`` (an OOD config; ``p@1``, ``p@2``... its levels ``s``): the perturbation effect of a level
is ``1 - MS-SSIM`` or ``1 - CW-SSIM``, averaged over its pages (:func:`page_effects`); ``mPE(p)`` is that averaged
over the levels, for three effects (``ms_ssim``, ``cw_ssim``, and ``mean``, the mean of the two); the degradation
of a level is ``D = 1 - mAP`` (mAP as a fraction); ``RD(p)`` is ``mean_s D / mPE`` (``ratio_of_means``) or
``mean_s (D_s / PE_s)`` (``mean_of_ratios``); ``mRD = 100 * mean_p RD(p)``; ``P-Avg`` the mean over ``p`` of its
levels' mean mAP. That gives six mRD figures, one per reading; none is comparable with the paper's tables.

MS-SSIM is dogood's (:func:`dogood.measures.quality.ms_ssim`, checked against pytorch-msssim; pyiqa's clips the
contrast-structure map per pixel, which can differ slightly). CW-SSIM is computed here on pyrtools' complex
steerable pyramid (``SteerablePyramidFreq(..., is_complex=True)``, the matlabPyrTools construction pyiqa ports):
pyiqa itself needs torch and CUDA wheels; ``pip install "dogood[rodla]"`` brings pyrtools. RoDLA's code hands
OpenCV's BGR pixels to pyiqa as RGB, which changes nothing on grey pages.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

#: CW-SSIM's pyramid (pyiqa's defaults, which RoDLA's code uses): levels, orientations, window, constant.
CW_LEVELS, CW_ORIENTATIONS, CW_WINDOW, CW_K = 4, 8, 7, 0.0
#: The effects each mPE reading averages.
EFFECTS = ("ms_ssim", "cw_ssim", "mean")
AGGREGATIONS = ("ratio_of_means", "mean_of_ratios")

NOTE = ("Reconstructed from RoDLA's code and its GitHub issues #4 and #6, not from the paper's equations (which "
        "could not be read): one mRD per reading of mPE (1 − MS-SSIM, 1 − CW-SSIM, their mean) and of RD (the "
        "ratio of the level means, or the mean of the levels' ratios); none is comparable with the paper's tables. "
        "See dogood.eval.rodla.")


def cw_ssim(a: np.ndarray, b: np.ndarray) -> float:
    """CW-SSIM (Sampat et al. 2009) of two grey pages of one size, as pyiqa's ``CW_SSIM`` defines it: the
    coarsest of :data:`CW_LEVELS` levels of a complex steerable pyramid with :data:`CW_ORIENTATIONS` bands; per
    band, ``(2 |sum c1 c2*| + K) / (sum |c1|^2 + |c2|^2 + K)`` over 7x7 windows, weighted by a Gaussian over the
    band (sigma a quarter of its height); the mean over the bands. A window with no energy on either page (both
    flat) counts 1. Raises ``ValueError`` for a page too small for the pyramid, ``ImportError`` without pyrtools."""
    import cv2
    from pyrtools.pyramids import SteerablePyramidFreq

    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        raise ValueError(f"the pages differ in size: {a.shape[::-1]} and {b.shape[::-1]}")
    if CW_LEVELS > int(np.floor(np.log2(min(a.shape)))) - 2:
        raise ValueError(f"a page of {a.shape[1]}x{a.shape[0]} is too small for {CW_LEVELS} pyramid levels "
                         f"(at least {2 ** (CW_LEVELS + 2)} pixels a side)")
    pa = SteerablePyramidFreq(a, height=CW_LEVELS, order=CW_ORIENTATIONS - 1, is_complex=True).pyr_coeffs
    pb = SteerablePyramidFreq(b, height=CW_LEVELS, order=CW_ORIENTATIONS - 1, is_complex=True).pyr_coeffs
    level = CW_LEVELS - 1
    h, w = pa[(level, 0)].shape
    oh, ow = h - CW_WINDOW + 1, w - CW_WINDOW + 1
    if oh < 1 or ow < 1:
        raise ValueError(f"a page of {a.shape[1]}x{a.shape[0]} leaves no {CW_WINDOW}x{CW_WINDOW} window at the "
                         "pyramid's coarsest level")
    gy = cv2.getGaussianKernel(oh, h / 4, cv2.CV_64F)
    gx = cv2.getGaussianKernel(ow, h / 4, cv2.CV_64F)
    weight = gy @ gx.T
    weight /= weight.sum()
    box = np.ones((CW_WINDOW, CW_WINDOW)) / CW_WINDOW ** 2

    def window_sum(x: np.ndarray) -> np.ndarray:  # 'valid' 7x7 mean
        full = cv2.filter2D(x, cv2.CV_64F, box, anchor=(0, 0), borderType=cv2.BORDER_CONSTANT)
        return full[:oh, :ow]

    values = []
    for k in range(CW_ORIENTATIONS):
        c1, c2 = pa[(level, k)], pb[(level, k)]
        corr = c1 * np.conj(c2)
        num = 2 * np.abs(window_sum(corr.real) + 1j * window_sum(corr.imag)) + CW_K
        den = window_sum(np.abs(c1) ** 2 + np.abs(c2) ** 2) + CW_K
        ratio = np.where(den > 0, num / np.where(den > 0, den, 1.0), 1.0)
        values.append(float((ratio * weight).sum()))
    return float(np.mean(values))


def page_effects(clean: Any, perturbed: Any) -> dict[str, float | None]:
    """``1 - MS-SSIM`` and ``1 - CW-SSIM`` of a perturbed page against its clean page (the perturbed page resized
    to the clean page's size, as RoDLA's code does), on luma; ``None`` for a measure the pages are too small for,
    or (CW-SSIM) without pyrtools."""
    import cv2

    from dogood.measures.quality import luma, ms_ssim

    a = np.asarray(clean.image.to_array())
    b = np.asarray(perturbed.image.to_array())
    if b.shape[:2] != a.shape[:2]:
        b = cv2.resize(b, (a.shape[1], a.shape[0]), interpolation=cv2.INTER_LINEAR)
    out: dict[str, float | None] = {}
    try:
        out["ms_ssim"] = 1.0 - ms_ssim(a, b)
    except ValueError:
        out["ms_ssim"] = None
    try:
        out["cw_ssim"] = 1.0 - cw_ssim(255.0 * luma(a), 255.0 * luma(b))
    except (ValueError, ImportError):
        out["cw_ssim"] = None
    return out


def _mean(values) -> float | None:
    good = [v for v in values if v is not None and not math.isnan(v)]
    return float(np.mean(good)) if good else None


def level_effects(pairs: list[tuple[Any, Any]]) -> dict[str, float | None]:
    """A level's effects: each page effect averaged over its ``(clean, perturbed)`` pages (pages a measure could
    not read left out), and their ``mean``."""
    per_page = [page_effects(c, p) for c, p in pairs]
    out = {k: _mean(e[k] for e in per_page) for k in ("ms_ssim", "cw_ssim")}
    out["mean"] = None if out["ms_ssim"] is None or out["cw_ssim"] is None else (out["ms_ssim"] + out["cw_ssim"]) / 2
    out["pages"] = len(per_page)
    return out


def perturbation_of(name: str) -> tuple[str, int]:
    """``rotate@2`` -> ``("rotate", 2)``; a config without ``@`` is its own perturbation, level 1."""
    base, sep, level = name.rpartition("@")
    if sep and level.isdigit():
        return base, int(level)
    return name, 1


def summarise(levels: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The RoDLA figures from per-config ``{"mAP": percent, "ms_ssim": PE, "cw_ssim": PE, "mean": PE}``: per
    perturbation its levels, mean mAP, mPE and RD under every reading; ``mRD`` per reading; ``P-Avg``."""
    groups: dict[str, list[str]] = {}
    for name in levels:
        groups.setdefault(perturbation_of(name)[0], []).append(name)
    per: dict[str, Any] = {}
    for p, names in groups.items():
        names = sorted(names, key=lambda n: perturbation_of(n)[1])
        rows = [levels[n] for n in names]
        d = [1.0 - r["mAP"] / 100.0 for r in rows]
        entry: dict[str, Any] = {"levels": names, "mAP": float(np.mean([r["mAP"] for r in rows])), "mPE": {}, "RD": {}}
        for effect in EFFECTS:
            pe = [r.get(effect) for r in rows]
            if any(v is None for v in pe):
                entry["mPE"][effect] = None
                entry["RD"][effect] = {a: None for a in AGGREGATIONS}
                continue
            mpe = float(np.mean(pe))
            entry["mPE"][effect] = mpe
            entry["RD"][effect] = {
                "ratio_of_means": float(np.mean(d)) / mpe if mpe > 0 else None,
                "mean_of_ratios": (float(np.mean([x / e for x, e in zip(d, pe)])) if all(e > 0 for e in pe)
                                   else None)}
        per[p] = entry
    mrd = {effect: {a: (None if any(v["RD"][effect][a] is None for v in per.values()) or not per else
                        100.0 * float(np.mean([v["RD"][effect][a] for v in per.values()])))
                    for a in AGGREGATIONS} for effect in EFFECTS}
    return {"perturbations": per, "mRD": mrd,
            "P-Avg": float(np.mean([v["mAP"] for v in per.values()])) if per else None, "note": NOTE}
