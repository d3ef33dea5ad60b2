"""Geometric distortion (`distort`, dogood.page.warp): maps, exact box re-projection, agreement with Tesseract."""

from __future__ import annotations

import shutil
import statistics

import cv2
import numpy as np
import pytest

from dogood.core.document import Document, Entity, PageImage, QAPair, Word
from dogood.core.errors import DocumentError, RecipeError
from dogood.page.warp import (
    KINDS,
    apply_map,
    distortion_map,
    register_map_provider,
    reproject_boxes,
)
from dogood.shifts import make_shift
from dogood.shifts.image.distort import DistortPage  # importing registers the shift


def identity_map(size):
    """The backward map that changes nothing: output pixel ``(x, y)`` samples ``(x, y)``."""
    xs, ys = np.meshgrid(np.arange(size[0], dtype=np.float32), np.arange(size[1], dtype=np.float32))
    return np.dstack([xs, ys])


needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None, reason="the tesseract binary is not installed")


def scale_map(size, out_size, sx, sy, tx=0, ty=0):
    """Backward map of scaling by (sx, sy) (pixel areas aligned, as cv2.resize) then translating by (tx, ty)."""
    xs, ys = np.meshgrid(np.arange(out_size[0], dtype=np.float64), np.arange(out_size[1], dtype=np.float64))
    return np.dstack([(xs - tx + 0.5) / sx - 0.5, (ys - ty + 0.5) / sy - 0.5]).astype(np.float32)


def rectangles_page(width=480, height=360, pad=2, seed=0):
    """A white page with 20 black rectangles ("words"); each word box is its rectangle grown by ``pad``."""
    rng = np.random.default_rng(seed)
    pixels = np.full((height, width), 255, np.uint8)
    rects = []
    for row in range(5):
        for col in range(4):
            w, h = int(rng.integers(20, 80)), int(rng.integers(6, 16))
            x0 = 30 + col * 110 + int(rng.integers(0, 15))
            y0 = 30 + row * 62 + int(rng.integers(0, 20))
            rects.append((x0, y0, x0 + w, y0 + h))
            pixels[y0:y0 + h, x0:x0 + w] = 0
    boxes = np.array([(x0 - pad, y0 - pad, x1 + pad, y1 + pad) for x0, y0, x1, y1 in rects])
    return pixels, np.array(rects), boxes


def synthetic_doc(rgb=False):
    pixels, _, boxes = rectangles_page()
    if rgb:
        pixels = np.dstack([pixels, pixels, np.full_like(pixels, 200)])
    words = [Word(f"w{i}", tuple(int(v) for v in b)) for i, b in enumerate(boxes)]
    entities = [Entity(0, "question", (0, 1), ((0, 1),)), Entity(1, "answer", (2,), ((0, 1),)),
                Entity(2, "other", (5, 6))]
    return Document(id="synthetic", image=PageImage.from_array(pixels), words=words, entities=entities,
                    label="form", qa=(QAPair("what?", ("w0",), "q0"),))


# -- (a) identity, (b) known maps --------------------------------------------------------------------------------------

@pytest.mark.parametrize("interpolation", ["linear", "cubic"])
def test_identity_map_changes_nothing(interpolation):
    pixels, _, boxes = rectangles_page()
    noise = np.random.default_rng(1).integers(0, 256, (50, 70, 3), dtype=np.uint8)
    # and zero-size boxes, one on the page's far edge, and the whole page
    boxes = np.vstack([boxes, [[5, 5, 5, 9], [7, 8, 12, 8], [480, 100, 480, 110], [0, 0, 480, 360]]])
    backward = identity_map((480, 360))
    assert np.array_equal(apply_map(pixels, backward, interpolation=interpolation), pixels)
    assert np.array_equal(apply_map(noise, identity_map((70, 50)), interpolation=interpolation), noise)
    for ink in (None, np.ones((360, 480), bool)):  # ink everywhere: ink bounds are the boxes
        new, counts = reproject_boxes(boxes, backward, (480, 360), ink=ink)
        assert np.array_equal(new, boxes)
        assert counts["fallback_boxes"] == 0


@pytest.mark.parametrize("sx, sy, tx, ty", [(1, 1, 13, -4), (2, 3, 5, 7), (3, 2, -2, 0)])
def test_scale_and_translation_move_boxes_exactly(sx, sy, tx, ty):
    pixels = np.random.default_rng(0).integers(0, 256, (90, 120), dtype=np.uint8)
    boxes = np.array([[10, 10, 40, 22], [30, 15, 70, 30], [30, 15, 70, 30], [0, 0, 120, 90], [50, 60, 50, 70],
                      [119, 80, 120, 90]])  # overlapping, duplicated, page-wide, zero-width, corner pixels
    out_size = (120 * sx + 40, 90 * sy + 20)
    backward = scale_map((120, 90), out_size, sx, sy, tx + 10, ty + 5)
    new, counts = reproject_boxes(boxes, backward, (120, 90))
    expected = boxes * np.array([sx, sy, sx, sy]) + np.array([tx + 10, ty + 5, tx + 10, ty + 5])
    assert np.array_equal(new, expected)
    assert counts["fallback_boxes"] == 0
    if (sx, sy) == (1, 1):  # a whole-pixel translation copies pixels exactly
        warped = apply_map(pixels, backward, border_value=7)
        assert np.array_equal(warped[ty + 5:ty + 95, tx + 10:tx + 130], pixels)
        assert (warped[:ty + 5] == 7).all() and (warped[:, tx + 130:] == 7).all()


def test_a_squeezed_out_box_falls_back_to_its_centre():
    xs, ys = np.meshgrid(np.arange(12, dtype=np.float32), np.arange(9, dtype=np.float32))
    backward = np.dstack([xs * 10 + 4, ys * 10 + 4])  # samples every tenth pixel of a 120x90 page
    boxes = np.array([[0, 0, 3, 3], [30, 40, 60, 50], [0, 0, 3, 3]])
    new, counts = reproject_boxes(boxes, backward, (120, 90))
    assert new.tolist() == [[0, 0, 0, 0], [3, 4, 6, 5], [0, 0, 0, 0]]
    assert counts["fallback_boxes"] == 2
    empty, counts = reproject_boxes(np.zeros((0, 4), int), backward, (120, 90))
    assert empty.shape == (0, 4) and counts["fallback_boxes"] == 0


# -- (c) every kind: boxes enclose their warped ink, inside the page ---------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("mode", ["box", "ink"])
@pytest.mark.parametrize("interpolation", ["linear", "cubic"])
def test_reprojected_boxes_enclose_the_warped_ink(kind, mode, interpolation):
    pixels, rects, boxes = rectangles_page()
    height, width = pixels.shape
    for seed in range(3):
        backward = distortion_map((width, height), np.random.default_rng(seed), (kind,), strength=1.0, margin=0.03)
        ink = pixels < 128 if mode == "ink" else None
        new, counts = reproject_boxes(boxes, backward, (width, height), ink=ink)
        assert counts["fallback_boxes"] == 0
        assert (new[:, 0] >= 0).all() and (new[:, 1] >= 0).all() and (new[:, 0] <= new[:, 2]).all()
        assert (new[:, 1] <= new[:, 3]).all() and (new[:, 2] <= width).all() and (new[:, 3] <= height).all()
        for (x0, y0, x1, y1), (nx0, ny0, nx1, ny1) in zip(rects, new):
            alone = np.full_like(pixels, 255)
            alone[y0:y1, x0:x1] = 0
            dark = 255.0 - apply_map(alone, backward, border_value=255, interpolation=interpolation)
            if mode == "ink":
                # the ink an OCR engine would binarise; 60%, not 50%: OpenCV interpolates at
                # positions rounded to 1/32 pixel, which can tip a half-covered pixel
                dark = (dark > 153).astype(float)
            total = dark.sum()
            assert total > 0
            assert dark[ny0:ny1, nx0:nx1].sum() >= 0.99 * total, (kind, seed, (x0, y0, x1, y1))


@pytest.mark.parametrize("kind", KINDS)
def test_generators_keep_the_page_inside_the_canvas(kind):
    for size in [(480, 360), (760, 1000), (90, 300)]:
        for seed in range(4):
            backward = distortion_map(size, np.random.default_rng(seed), (kind,), strength=1.0, margin=0.03)
            assert backward.shape == (size[1], size[0], 2) and backward.dtype == np.float32
            assert np.isfinite(backward).all()
            warped = apply_map(np.full((size[1], size[0]), 255, np.uint8), backward, border_value=0)
            ring = np.concatenate([warped[0], warped[-1], warped[:, 0], warped[:, -1]])
            assert (ring == 0).all(), f"{kind} {size} seed {seed}: the page reaches the canvas edge"
            # and the page is still mostly there (a curl along a narrow page needs more room: its sides must
            # sample beyond the page's at every strength)
            assert (warped == 255).mean() > (0.5 if min(size) > 100 else 0.2)


def test_kinds_combine_and_strength_zero_changes_nothing():
    size = (400, 300)
    backward = distortion_map(size, np.random.default_rng(0), KINDS, strength=0.0, margin=0.1)
    assert np.abs(backward - identity_map(size)).max() < 1e-3
    strong = distortion_map(size, np.random.default_rng(0), KINDS, strength=1.0, folds=2)
    assert np.abs(strong - identity_map(size)).max() > 5
    with pytest.raises(ValueError, match="unknown distortion kind"):
        distortion_map(size, np.random.default_rng(0), ("twist",))


def test_grow_canvas_keeps_the_scale():
    rng = np.random.default_rng(3)
    backward = distortion_map((400, 300), rng, ("perspective",), strength=1.0, margin=0.05, canvas="grow")
    height, width = backward.shape[:2]
    assert (width, height) != (400, 300)
    warped = apply_map(np.full((300, 400), 255, np.uint8), backward, border_value=0)
    assert warped[0].max() == 0 and warped[-1].max() == 0 and warped[:, 0].max() == 0 and warped[:, -1].max() == 0
    flat = distortion_map((400, 300), rng, ("fold",), strength=0.0, margin=0.05, canvas="grow")
    assert flat.shape == (330, 440, 2)
    # the page keeps its pixels: a whole-pixel offset, no resampling
    assert np.array_equal(flat, identity_map((440, 330)) - np.array([20, 15], np.float32))


# -- (f) the shift: what it keeps, determinism -------------------------------------------------------------------------

@pytest.mark.parametrize("rgb", [False, True])
def test_shift_keeps_text_labels_and_order(rgb):
    doc = synthetic_doc(rgb)
    out, counts, _ = DistortPage().apply(doc, np.random.default_rng(0))
    assert [w.text for w in out.words] == [w.text for w in doc.words]
    assert out.entities == doc.entities and out.label == doc.label and out.qa == doc.qa
    assert out.image.to_array().shape == doc.image.to_array().shape  # grayscale stays HxW, RGB stays HxWx3
    assert out.image.encoding == "jpeg"
    assert counts == {"words": 20, "fallback_boxes": 0, "no_ink": 0}
    assert not np.array_equal(out.boxes, doc.boxes)
    assert not np.array_equal(out.image.to_array(), doc.image.to_array())


def test_shift_is_deterministic_and_seeds_differ():
    doc = synthetic_doc()
    shift = make_shift({"shift": "distort", "kinds": ["fold", "curl", "perspective"], "reproject": "box"})
    a, b = shift(doc, 5), shift(doc, 5)
    c = shift(doc, 6)
    assert a.image.encoded_bytes() == b.image.encoded_bytes()
    assert np.array_equal(a.boxes, b.boxes)
    assert not np.array_equal(a.image.to_array(), c.image.to_array())
    assert not np.array_equal(a.boxes, c.boxes)
    record = a.provenance[-1]
    assert record.shift == "distort" and record.params["kinds"] == ["fold", "curl", "perspective"]
    assert record.counts["words"] == 20


def test_shift_on_real_funsd_pages(funsd_test):
    for doc_id in funsd_test.ids()[:3]:
        doc = funsd_test.load(doc_id)
        for mode in ("box", "ink"):
            out, counts, _ = DistortPage(reproject=mode, encoding="png").apply(doc, np.random.default_rng(0))
            assert len(out.words) == len(doc.words) and out.word_entity() == doc.word_entity()
            assert (out.width, out.height) == (doc.width, doc.height)
            assert counts["fallback_boxes"] == 0


def test_bad_parameters_are_refused():
    for spec in [{"kinds": ["twist"]}, {"strength": 2}, {"reproject": "glyph"}, {"encoding": "gif"},
                 {"folds": 0}, {"margin": 0.6}, {"border_value": 300}, {"canvas": "huge"}]:
        with pytest.raises(RecipeError):
            make_shift({"shift": "distort", **spec})


# -- (g) map providers -------------------------------------------------------------------------------------------------

def test_a_registered_map_provider_is_used():
    calls = []

    def double(pixels, rng):
        calls.append(pixels.shape)
        height, width = pixels.shape[:2]
        return scale_map((width, height), (2 * width, 2 * height), 2, 2)

    register_map_provider("test-double", double)
    doc = synthetic_doc()
    out, counts, _ = make_shift({"shift": "distort", "map_provider": "test-double"}).apply(doc, np.random.default_rng(0))
    assert calls == [(360, 480)]
    assert (out.width, out.height) == (960, 720)
    ink = make_shift({"shift": "distort", "map_provider": "test-double", "reproject": "box"}).apply(
        doc, np.random.default_rng(0))[0]
    assert np.array_equal(ink.boxes, doc.boxes * 2)


@pytest.mark.parametrize("bad, message", [
    (lambda p, rng: np.zeros((10, 10), np.float32), "shape"),
    (lambda p, rng: np.zeros((10, 10, 3), np.float32), "shape"),
    (lambda p, rng: np.zeros((10, 10, 2), np.int32), "floating"),
    (lambda p, rng: np.full((10, 10, 2), np.nan, np.float32), "non-finite"),
    (lambda p, rng: None, "shape"),
])
def test_a_bad_provider_map_names_the_provider_and_the_document(bad, message):
    register_map_provider("test-bad", bad)
    shift = make_shift({"shift": "distort", "map_provider": "test-bad"})
    with pytest.raises(DocumentError, match=message) as error:
        shift.apply(synthetic_doc(), np.random.default_rng(0))
    assert "test-bad" in str(error.value) and "synthetic" in str(error.value)


def test_an_unknown_provider_lists_the_known_ones():
    register_map_provider("test-known", lambda p, rng: identity_map(p.shape[1::-1]))
    with pytest.raises(RecipeError, match="unknown map provider 'nope'.*test-known"):
        make_shift({"shift": "distort", "map_provider": "nope"})
    with pytest.raises(TypeError):
        register_map_provider("test-broken", "not a function")


# -- (e) Tesseract reads the words where the boxes say -----------------------------------------------------------------

def _iou(a, b) -> float:
    inter = max(0, min(a[2], b[2]) - max(a[0], b[0])) * max(0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _best(text, box, ocr) -> float:
    return max((_iou(box, w.box) for w in ocr if w.text.lower() == text.lower()), default=0.0)


def _tesseract(image: PageImage, scale: int = 3):
    """Tesseract's words, read at 3x (about 300 dpi for FUNSD's ~100 dpi scans), boxes scaled back."""
    from dogood.page.ocr import ocr_words

    big = cv2.resize(image.to_array(), None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
    words = ocr_words(PageImage.from_array(big), cache=False)
    return [Word(w.text, tuple(round(v / scale) for v in w.box)) for w in words]


def _inside(box, ocr, text) -> float:
    """The share of the area of the word ``text`` Tesseract read nearest ``box`` that lies inside ``box``."""
    best = 0.0
    for w in ocr:
        if w.text.lower() != text.lower():
            continue
        a, b = box, w.box
        inter = max(0, min(a[2], b[2]) - max(a[0], b[0])) * max(0, min(a[3], b[3]) - max(a[1], b[1]))
        area = (b[2] - b[0]) * (b[3] - b[1])
        best = max(best, inter / area if area > 0 else 0.0)
    return best


@needs_tesseract
@pytest.mark.parametrize("reproject", ["ink", "margins"])
def test_tesseract_reads_the_words_where_the_reprojected_boxes_are(funsd_test, reproject):
    """The acceptance criterion: over the words Tesseract read on the original page, ``ink`` boxes (tight, as
    OCR's) have a median IoU >= 0.7 with the words Tesseract reads on the warped page, and ``margins`` boxes
    (FUNSD's looser convention) hold those words: at least 90% of each inside, in the median."""
    scores = []
    for k, doc_id in enumerate(funsd_test.ids()[:3]):
        doc = funsd_test.load(doc_id)
        original = _tesseract(doc.image)
        kept = [i for i, w in enumerate(doc.words) if _best(w.text, w.box, original) > 0.5]
        out, _, _ = DistortPage(reproject=reproject).apply(doc, np.random.default_rng(k))
        warped = _tesseract(out.image)
        measure = _best if reproject == "ink" else (lambda text, box, ocr: _inside(box, ocr, text))
        scores += [measure(out.words[i].text, out.words[i].box, warped) for i in kept]
    assert len(scores) > 100
    median = statistics.median(scores)
    print(f"{reproject}: median {median:.3f} over {len(scores)} words")
    assert median >= (0.7 if reproject == "ink" else 0.9)


@pytest.mark.parametrize("mode", ["L", "P", "RGBA", "I;16", "1", "CMYK"])
def test_any_page_mode_is_distorted(funsd_test, mode):
    import io

    from PIL import Image

    doc = funsd_test.load(funsd_test.ids()[1])
    im = doc.image.to_pil()
    im = Image.fromarray(doc.image.to_array().astype(np.uint16) * 257) if mode == "I;16" else im.convert(mode)
    buf = io.BytesIO()
    im.save(buf, format="TIFF" if mode == "CMYK" else "PNG")
    page = doc.replace(image=PageImage.from_bytes(buf.getvalue()))
    out = DistortPage()(page, 0)
    pixels = out.image.to_array()
    grey = mode in ("L", "I;16", "1")
    assert pixels.shape == ((doc.height, doc.width) if grey else (doc.height, doc.width, 3))
    assert [w.text for w in out.words] == [w.text for w in doc.words]
    boxes = out.boxes
    assert (boxes[:, 0] >= 0).all() and (boxes[:, 2] <= doc.width).all() and (boxes[:, 3] <= doc.height).all()


# -- (g) severity levels share their draws: the warp fields differ by a scale ------------------------------------------

@pytest.mark.parametrize("kinds", [("perspective", "curve", "fold"), ("perspective",), ("curl",), ("fold", "curve")])
def test_levels_warp_fields_differ_by_a_scale(funsd_test, kinds):
    """One draw, every level: the displacement (backward map minus identity) at level 1 is its strength over level
    5's times level 5's, at every pixel (float32 rounding aside), and level 0 strength is the identity."""
    doc = funsd_test.load(funsd_test.ids()[0])
    pixels = doc.image.to_array()
    ys, xs = np.mgrid[0:doc.height, 0:doc.width]
    identity = np.dstack([xs, ys]).astype(np.float64)
    fields = {}
    for level in (1, 3, 5):
        shift = make_shift({"shift": "distort", "kinds": list(kinds), **DistortPage.severities[level]})
        fields[level] = shift.backward_map(doc, pixels, np.random.default_rng(11)) - identity
    assert np.abs(fields[5]).max() > 20  # a real warp
    for level in (1, 3):
        ratio = DistortPage.severities[level]["strength"] / DistortPage.severities[5]["strength"]
        assert np.abs(fields[level] - ratio * fields[5]).max() < 0.05
    zero = make_shift({"shift": "distort", "kinds": list(kinds), "strength": 0.0})
    assert np.abs(zero.backward_map(doc, pixels, np.random.default_rng(11)) - identity).max() < 1e-3


def test_strength_zero_keeps_every_box(funsd_test):
    doc = funsd_test.load(funsd_test.ids()[2])
    out = make_shift({"shift": "distort", "strength": 0.0})(doc, 4)
    assert np.array_equal(out.boxes, doc.boxes)
