"""Image quality (dogood.measures.quality): SSIM and MS-SSIM equal scikit-image's and pytorch-msssim's on the same
FUNSD pages; alignment undoes a page's shrink; a severity build's effects carry them."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from dogood.measures.effects import effects, measured
from dogood.measures.quality import aligned, both, ms_ssim, page_quality, similarity, ssim
from dogood.pipeline.stats import add
from dogood.shifts import make_shift


def _pages(funsd_test):
    page = funsd_test.load(funsd_test.ids()[0]).image.to_array()
    noisy = cv2.add(page, np.random.default_rng(0).integers(0, 60, page.shape, dtype=np.uint8))
    return page, [cv2.GaussianBlur(page, (0, 0), 1.2), noisy, np.roll(page, 3, axis=1)]


def test_ssim_is_scikit_images_gaussian_ssim(funsd_test):
    skimage = pytest.importorskip("skimage.metrics")
    page, others = _pages(funsd_test)
    for other in others:
        expected = skimage.structural_similarity(page, other, gaussian_weights=True, sigma=1.5,
                                                 use_sample_covariance=False, data_range=255)
        assert ssim(page, other) == pytest.approx(expected, abs=1e-4)
    assert ssim(page, page) == pytest.approx(1.0)


def test_ms_ssim_is_pytorch_msssims(funsd_test):
    torch = pytest.importorskip("torch")
    pytorch_msssim = pytest.importorskip("pytorch_msssim")
    page, others = _pages(funsd_test)
    tensor = lambda x: torch.from_numpy(x.astype(np.float32))[None, None]  # noqa: E731
    for other in others:
        # on sizes halving evenly four times, the same numbers; on others pytorch-msssim pools zero padding in
        h, w = (n // 16 * 16 for n in page.shape)
        a, b = page[:h, :w], other[:h, :w]
        expected = pytorch_msssim.ms_ssim(tensor(a), tensor(b), data_range=255).item()
        assert ms_ssim(a, b) == pytest.approx(expected, abs=1e-4)
        full = pytorch_msssim.ms_ssim(tensor(page), tensor(other), data_range=255).item()
        assert ms_ssim(page, other) == pytest.approx(full, abs=1e-2)
    assert ms_ssim(page, page) == pytest.approx(1.0)
    assert both(page, others[0]) == (pytest.approx(ssim(page, others[0])), pytest.approx(ms_ssim(page, others[0])))


def test_alignment_undoes_a_whole_page_shrink(funsd_test):
    doc = funsd_test.load(funsd_test.ids()[1])
    page = doc.image.to_array()
    h, w = page.shape
    matrix = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), 2.0, 0.85)  # turned 2 degrees, 85% the size
    turned = cv2.warpAffine(page, matrix, (w, h), flags=cv2.INTER_CUBIC, borderValue=0)
    corners = lambda b: np.column_stack([b[:, [0, 1]], b[:, [2, 3]]])  # noqa: E731
    boxes = doc.boxes.astype(np.float64)
    moved = np.concatenate([cv2.transform(boxes[:, :2][None], matrix)[0], cv2.transform(boxes[:, 2:][None], matrix)[0]], 1)
    assert np.allclose(similarity(corners(boxes)[:, :2], corners(moved)[:, :2]), matrix, atol=1e-6)
    q = page_quality(page, turned, doc.boxes, np.round(moved))
    assert q.ms_ssim < 0.5 and q.aligned_ms_ssim > 0.85  # the page only shrank and turned
    assert aligned(page, turned, doc.boxes, doc.boxes[:2]) is None  # words that do not correspond
    unmoved = page_quality(page, cv2.GaussianBlur(page, (0, 0), 1), doc.boxes, doc.boxes)
    assert unmoved.aligned_ssim == unmoved.ssim and unmoved.aligned_ms_ssim == unmoved.ms_ssim


def test_severity_effects_carry_the_quality(funsd_test):
    docs = [funsd_test.load(i) for i in funsd_test.ids()[:2]]
    totals = {}
    for level, strength in ((1, 0.05), (5, 1.0)):
        total = {"words": 0, "text_changed": 0, "effects": {}}
        for doc in docs:
            out = make_shift({"shift": "distort", "strength": strength})(doc, 3)
            add(total, {"words": len(out.words), "effects": effects(doc, out)})
        totals[level] = measured(total)
    assert totals[1]["ms_ssim"] > totals[5]["ms_ssim"] and totals[1]["aligned_ms_ssim"] > totals[5]["aligned_ms_ssim"]
    assert 0 < totals[5]["ssim"] < totals[1]["ssim"] < 1
    text = make_shift({"shift": "char_deletion", "fraction": 0.5})(docs[0], 3)  # the page is not touched
    m = measured({"words": 1, "effects": effects(docs[0], text)})
    assert m["ssim"] is None and m["ms_ssim"] is None and m["aligned_ms_ssim"] is None


def test_pages_of_other_sizes_are_not_compared():
    page = np.full((300, 200), 255, np.uint8)
    with pytest.raises(ValueError, match="differ in size"):
        ssim(page, page[:100])
    with pytest.raises(ValueError, match="too small"):
        ms_ssim(page[:100, :100], page[:100, :100])
    assert page_quality(page, np.full((320, 200), 255, np.uint8)).ssim is None



def test_a_severity_build_states_the_quality_per_level_in_its_card(funsd_dir, tmp_path):
    import json

    from dogood.measures.effects import measured as measured_effects
    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import parse_recipe

    recipe = parse_recipe({"name": "q", "version": "1.0.0", "source": {"kind": "funsd"}, "seed": 0,
                           "severities": [1, 5], "configs": {"distort": [{"shift": "distort"}],
                                                             "cd": [{"shift": "char_deletion"}]}})
    build(recipe, tmp_path / "q", source_path=funsd_dir, limit=2)
    stats = json.loads((tmp_path / "q" / "dogood_build.json").read_text())["stats"]
    m = {c: measured_effects(stats[c]["test"]) for c in ("distort@1", "distort@5", "cd@1")}
    assert 0.7 <= m["distort@1"]["ms_ssim"] and m["distort@5"]["ms_ssim"] < m["distort@1"]["ms_ssim"]
    assert m["distort@5"]["aligned_ms_ssim"] > m["distort@5"]["ms_ssim"] and m["cd@1"]["ssim"] is None
    card = (tmp_path / "q" / "README.md").read_text()
    assert "| SSIM / MS-SSIM | SSIM / MS-SSIM, page aligned |" in card
    one = m["distort@1"]
    assert (f"| {one['ssim']:.3f} / {one['ms_ssim']:.3f} | {one['aligned_ssim']:.3f} / "
            f"{one['aligned_ms_ssim']:.3f} |") in card
    assert "| `cd` | 1 |" in card and card.split("| `cd` | 1 |")[1].split("\n")[0].endswith("| – | – |")
