"""Captured-page I2 (`capture`, dogood.page.camera): exact boxes through the camera, a surface behind, levels, seeds."""

from __future__ import annotations

from pathlib import Path

import cv2
import datasets
import numpy as np
import pytest

from dogood.core.document import Document, Entity, PageImage, Word
from dogood.page.camera import nonrigid_displacement, word_contrast
from dogood.pipeline.build import build
from dogood.pipeline.recipe import load_recipe
from dogood.shifts import CapturePage, make_shift


def rectangles_doc(width=600, height=800, seed=0, rgb=False) -> tuple[Document, np.ndarray]:
    """A light page with 30 "words" of black bars 3 px wide, 3 px apart (each word's box their bounds grown by 3 px)."""
    rng = np.random.default_rng(seed)
    pixels = np.full((height, width), 235, np.uint8)
    rects = []
    for row in range(10):
        for col in range(3):
            w, h = int(rng.integers(40, 120)), int(rng.integers(10, 20))
            x0, y0 = 60 + col * 170 + int(rng.integers(0, 20)), 60 + row * 68 + int(rng.integers(0, 20))
            rects.append((x0, y0, x0 + w, y0 + h))
            for x in range(x0, x0 + w - 2, 6):
                pixels[y0:y0 + h, x:x + 3] = 10
    words = tuple(Word(f"w{i}", (x0 - 3, y0 - 3, x1 + 3, y1 + 3)) for i, (x0, y0, x1, y1) in enumerate(rects))
    entities = (Entity(0, "question", (0, 1), ((0, 1),)), Entity(1, "answer", (2,), ()))
    if rgb:  # blue ink on cream paper
        pixels = np.dstack([np.where(pixels < 128, 20, 240), np.where(pixels < 128, 30, 230),
                            np.where(pixels < 128, 120, 200)]).astype(np.uint8)
    doc = Document(id="rects", image=PageImage.from_array(pixels), words=words, entities=entities, label="form")
    return doc, np.array(rects)


#: This checkout's recipes (by path: an installed dogood may map the names to another checkout's).
RECIPES = Path(__file__).resolve().parents[3] / "recipes"


def captured(doc, seed=0, **params):
    shift = CapturePage(surface="texture", **params)
    outcome = shift.apply(doc, np.random.default_rng(seed))
    return shift, outcome


def on_page(shift, doc, seed, erode=3):
    """Output pixels whose ray meets the page, ``erode`` pixels in from its border."""
    backward = shift.geometry(doc, np.random.default_rng(seed))[2]
    u, v = backward[..., 0], backward[..., 1]
    return (u >= erode) & (u <= doc.width - 1 - erode) & (v >= erode) & (v <= doc.height - 1 - erode)


@pytest.mark.parametrize("level", [1, 3, 5])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("rgb", [False, True], ids=["grey", "rgb"])
def test_reprojected_boxes_hold_the_ink(level, seed, rgb):
    doc, _ = rectangles_doc(seed=seed, rgb=rgb)
    shift, outcome = captured(doc, seed, **CapturePage.severities[level])
    out = outcome.doc
    luma = np.asarray(out.image.to_pil().convert("L"), dtype=np.float32)
    assert outcome.counts["fallback_boxes"] == 0 and outcome.counts["no_ink"] == 0
    ink = luma < 0.7 * cv2.blur(luma, (41, 41))  # darker than the paper around it, whatever the light
    dark = ink & on_page(shift, doc, seed)
    covered = np.zeros_like(dark)
    grow = 2 + int(np.ceil(2 * CapturePage.severities[level]["blur"]))  # defocus spreads the ink
    for word in out.words:
        x0, y0, x1, y1 = word.box
        covered[max(y0 - grow, 0):y1 + grow, max(x0 - grow, 0):x1 + grow] = True
        # the boxes keep the source's margins (reproject: margins): its bars fill about a quarter of each
        assert ink[y0:y1, x0:x1].mean() > 0.1, f"box {word.text} lost its ink"
    assert dark.sum() > 1000 and (dark & ~covered).sum() <= 0.002 * dark.sum()


def test_boxes_are_exact_without_camera_effects():
    """With no blur, noise or shading, the ink's bounds are the boxes (``reproject: ink``): every box edge within
    1 px."""
    doc, _ = rectangles_doc()
    params = dict(CapturePage.severities[4], blur=0.0, noise=0.0, shading=0.0, gradient=0.0, shadow=0.0,
                  quality=[100, 100], reproject="ink")
    shift, outcome = captured(doc, 2, **params)
    luma = np.asarray(outcome.doc.image.to_pil().convert("L"), dtype=np.int32)
    for word in outcome.doc.words:
        x0, y0, x1, y1 = word.box
        window = luma[y0 - 6:y1 + 6, x0 - 6:x1 + 6] < 100
        ys, xs = np.nonzero(window)
        bounds = np.array([xs.min(), ys.min(), xs.max() + 1, ys.max() + 1]) + np.array([x0, y0, x0, y0]) - 6
        assert np.abs(bounds - np.array(word.box)).max() <= 1, (word.text, bounds, word.box)


def test_words_labels_and_size_unchanged_and_rgb():
    doc, _ = rectangles_doc()
    out = captured(doc, 0)[1].doc
    assert [w.text for w in out.words] == [w.text for w in doc.words]
    assert out.entities == doc.entities and out.label == doc.label
    assert (out.width, out.height) == (doc.width, doc.height)
    assert out.image.to_array().shape == (doc.height, doc.width, 3)
    assert out.image.encoded_bytes()[:2] == b"\xff\xd8"  # JPEG, at the drawn quality


def test_same_seed_same_bytes_other_seed_other_page():
    doc, _ = rectangles_doc()
    a = captured(doc, 7)[1].doc
    b = captured(doc, 7)[1].doc
    c = captured(doc, 8)[1].doc
    assert a.image.encoded_bytes() == b.image.encoded_bytes() and a.words == b.words
    assert a.image.encoded_bytes() != c.image.encoded_bytes()


def test_surface_is_visible_around_the_page_not_black():
    doc, _ = rectangles_doc()
    for seed in range(3):
        shift, outcome = captured(doc, seed)
        pixels = outcome.doc.image.to_array().astype(np.int32)
        off = ~on_page(shift, doc, seed, erode=-3)
        assert off.mean() > 0.05  # the margin and the perspective show the surface
        surface = pixels[off]
        assert (surface.sum(axis=1) == 0).mean() < 0.01  # no black canvas
        assert surface.std(axis=0).max() > 3  # a texture, not a flat fill


def test_levels_grow_in_measured_effect():
    doc, _ = rectangles_doc()
    before = word_contrast(doc.image.to_array(), doc.boxes)
    displacement, contrast = [], []
    for level in range(1, 6):
        shift = CapturePage(surface="texture", **CapturePage.severities[level])
        d, c = [], []
        for seed in range(3):
            backward = shift.geometry(doc, np.random.default_rng(seed))[2]
            d.append(nonrigid_displacement(backward, (doc.width, doc.height)))
            out = shift.apply(doc, np.random.default_rng(seed)).doc
            c.append(word_contrast(out.image.to_array(), out.boxes) / before)
        displacement.append(np.mean(d))
        contrast.append(np.mean(c))
    assert all(a < b for a, b in zip(displacement, displacement[1:])), displacement
    assert all(a > b for a, b in zip(contrast, contrast[1:])), contrast
    assert displacement[0] > 0 and contrast[-1] < 0.9


def test_levels_are_valid_parameters():
    assert sorted(CapturePage.severities) == [1, 2, 3, 4, 5]
    for level, values in CapturePage.severities.items():
        shift = make_shift({"shift": "capture", **values})
        assert all(getattr(shift, k) == (tuple(v) if isinstance(v, list) else v) for k, v in values.items())
    assert CapturePage.family == "image" and CapturePage.subfamily == "capture"


def test_bad_quality_is_refused():
    with pytest.raises(ValueError, match="quality"):
        CapturePage(quality=[90, 60])


def test_photo_surface_is_credited(funsd_test):
    doc = funsd_test.load(funsd_test.ids()[0])
    shift = CapturePage()
    outcome = shift.apply(doc, np.random.default_rng(0))
    (photo_id,) = outcome.tallies["photo"]
    (credit,) = shift.credits({"photo": dict(outcome.tallies["photo"])})
    assert credit["id"] == int(photo_id) and credit["license"] and credit["url"]
    assert outcome.counts["words"] == len(doc.words)


def test_recipes_offer_capture_and_keep_their_configs():
    funsd_i, i2 = load_recipe(RECIPES / "funsd-i.yaml"), load_recipe(RECIPES / "rvl-cdip-i2.yaml")
    names = list(funsd_i.configs)
    assert names[names.index("capture"):names.index("capture") + 2] == ["capture", "capture_reocr"]
    assert funsd_i.configs["capture_reocr"] == [{"shift": "capture"}, {"shift": "reocr"}]
    assert list(i2.configs)[-2:] == ["capture", "capture_kept_words"]
    assert {"distort", "perspective", "curl", "fold", "distort_reocr"} <= set(funsd_i.configs)
    assert {"distort", "distort_kept_words", "perspective", "curl", "fold"} <= set(i2.configs)


def test_funsd_i_capture_builds_and_loads(funsd_dir, funsd_test, tmp_path):
    out = tmp_path / "funsd-i"
    build(load_recipe(RECIPES / "funsd-i.yaml"), out, source_path=funsd_dir, limit=2, configs=["capture"], progress=False)
    ds = datasets.load_dataset(str(out), "capture", split="test")
    assert ds.num_rows == 2
    for row in ds:
        original = funsd_test.load(row["id"])
        assert row["image"].mode == "RGB" and row["image"].size == (original.width, original.height)
        assert row["dogood"]["words"] == [w.text for w in original.words]
    card = (out / "README.md").read_text()
    assert "capture: photo (test): " in card and "`capture`: the page" in card


def test_levels_share_their_draws(funsd_test):
    """Every level of one draw puts the page on the same photo, with the same crease lines, light and noise
    seed: the generator is in the same state after the geometry whatever the level, and the height fields'
    creases lie on the same lines (a level with more creases adds some)."""
    from dogood.page.camera import HeightField

    doc = funsd_test.load(funsd_test.ids()[0])
    photos, states = set(), set()
    for level, values in CapturePage.severities.items():
        shift = CapturePage(**values)
        shift.prepare()
        rng = np.random.default_rng(5)
        shift.geometry(doc, rng)
        states.add(str(rng.bit_generator.state))
        photos.add(tuple(shift.apply(doc, np.random.default_rng(5)).tallies["photo"]))
    assert len(states) == 1 and len(photos) == 1
    one = HeightField.draw((doc.width, doc.height), np.random.default_rng(2), 0.006, 1, 0.002)
    two = HeightField.draw((doc.width, doc.height), np.random.default_rng(2), 0.045, 2, 0.01)
    assert one.folds[0][1:] == two.folds[0][1:] and len(two.folds) == 2  # same line and sharpness
    assert two.folds[0][0] / one.folds[0][0] == pytest.approx(0.01 / 0.002)  # heights scale with the level
    assert two.bends[0][0] / one.bends[0][0] == pytest.approx(0.045 / 0.006) and two.bends[0][1:] == one.bends[0][1:]


def test_pages_lie_on_a_surface_a_page_lies_on(funsd_test):
    """The photo behind the page is a table, a bed, a floor... as COCO's own annotations mark it, cropped to that
    surface; the tally says which."""
    from dogood.page.photos import SURFACE_CATEGORIES

    shift = CapturePage()
    shift.prepare()
    pool = shift.pool
    assert len(pool) > 0 and set(pool.surfaces) == {p.id for p in pool}
    doc = funsd_test.load(funsd_test.ids()[0])
    for seed in range(4):
        outcome = shift.apply(doc, np.random.default_rng(seed))
        (photo_id,) = outcome.tallies["photo"]
        (category,) = outcome.tallies["surface"]
        assert category == pool.surfaces[int(photo_id)].category and category in SURFACE_CATEGORIES


def test_drawn_surfaces_when_no_photo_fits(monkeypatch):
    """A pool without a surface photo (or ``surface: texture``) gives drawn wood or fabric, tallied by kind."""
    from dogood.page.camera import texture

    kinds = {texture(np.random.default_rng(seed))[1] for seed in range(12)}
    assert kinds == {"wood", "fabric"}
    for seed in range(4):
        pixels, kind = texture(np.random.default_rng(seed))
        assert pixels.shape == (256, 256, 3) and pixels.std() > 3  # a texture, not a flat fill
    doc, _ = rectangles_doc()
    shift, outcome = captured(doc, 0)
    assert set(outcome.tallies) == {"surface"} and set(outcome.tallies["surface"]) <= {"wood", "fabric"}
    monkeypatch.setattr(CapturePage, "pool", property(lambda self: []))  # no surface photo in the pool
    outcome = CapturePage().apply(doc, np.random.default_rng(0))
    assert set(outcome.tallies) == {"surface"}


def test_contact_shadow_darkens_the_surface_along_the_page_edge():
    doc, _ = rectangles_doc()
    pixels = {}
    for contact in (0.0, 0.6):
        shift, outcome = captured(doc, 3, contact=contact, noise=0.0, quality=[100, 100], shadow=0.0,
                                  gradient=0.0)
        pixels[contact] = outcome.doc.image.to_array().astype(int).mean(axis=2)
    page = on_page(shift, doc, 3, erode=-1)
    ring = cv2.dilate(page.astype(np.uint8), np.ones((9, 9), np.uint8)).astype(bool) & ~page
    far = ~cv2.dilate(page.astype(np.uint8), np.ones((41, 41), np.uint8)).astype(bool)
    darker = pixels[0.0] - pixels[0.6]
    assert darker[ring].mean() > 8  # right around the page
    assert np.abs(darker[far]).mean() < 1  # not out on the surface
    assert np.abs(darker[on_page(shift, doc, 3, erode=3)]).mean() < 1  # never on the paper


@pytest.mark.parametrize("seed", range(4))
def test_folds_never_notch_the_paper_edge(funsd_test, seed):
    """Every ray is met with the lifted sheet (one more step of the fixed point moves no hit), and the page's edge
    at level 5's bend and creases is a smooth line: within a pixel of its own running mean over 31 rows. The rays
    were once met with the sheet clipped at its edge, where the iteration swung between sheet and surface: hits
    20-35 pixels off, an edge notched by 2-3 pixels every few rows."""
    from dogood.page.camera import STEP, hit_points
    from dogood.page.warp import coarse_grid

    doc = funsd_test.load(funsd_test.ids()[0])
    shift = CapturePage(**{**CapturePage.severities[5], "roll": 0.0, "tilt": 10.0})
    camera, field, backward, _ = shift.geometry(doc, np.random.default_rng(seed))
    nodes = coarse_grid(doc.width, doc.height, STEP)
    hits = hit_points(camera, field, nodes)
    rays, centre = camera.rays(nodes), camera.centre
    again = centre[:2] + ((-field.height(hits, clip=False) - centre[2]) / rays[..., 2])[..., None] * rays[..., :2]
    assert np.abs(again - hits).max() < 0.01
    u, v = backward[..., 0], backward[..., 1]
    page = (u >= 0) & (u <= doc.width - 1) & (v >= 0) & (v <= doc.height - 1)
    for mask in (page, page.T):
        rows = np.flatnonzero(mask.any(axis=1))
        for edge in ([np.flatnonzero(mask[r]).max() for r in rows], [np.flatnonzero(mask[r]).min() for r in rows]):
            middle = np.asarray(edge[len(edge) // 10 : -len(edge) // 10], float)
            wiggle = middle - np.convolve(middle, np.ones(31) / 31, mode="same")
            assert np.abs(wiggle[15:-15]).max() < 1.0
