"""I3, scan quality through augraphy: every word's box keeps its own ink, unshifted; seeded, global state untouched."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("augraphy")

from dogood.measures.box_ink import box_ink  # noqa: E402
from dogood.measures.effects import contrast_under_ink  # noqa: E402
from dogood.pipeline.recipe import load_recipe  # noqa: E402
from dogood.shifts import ScanQuality, make_shift  # noqa: E402
from dogood.shifts.image.scan_quality import KINDS  # noqa: E402

RECIPES = Path(__file__).resolve().parents[3] / "recipes"


@pytest.fixture(scope="module")
def forms(funsd_test):
    return [funsd_test.load(i) for i in funsd_test.ids()[:3]]


@pytest.fixture(scope="module")
def rvl_page(data_dir):
    from dogood.sources.rvl_cdip import RvlCdipSource

    source = RvlCdipSource(root=data_dir / "rvl_cdip", split="test")
    return source.load(source.ids()[0])


def check_boxes(doc, out):
    """Words and boxes unchanged, same page size; the box check of :mod:`dogood.measures.box_ink` over the words with ink."""
    assert out.words == doc.words and out.entities == doc.entities and out.label == doc.label
    before, after = doc.image.to_array(), out.image.to_array()
    assert after.shape == before.shape
    check = box_ink(before, after, doc.boxes)
    kept, offset = check.kept[check.has_ink], check.offset[check.has_ink]
    assert len(kept) >= 0.5 * len(doc.words)
    return kept, (np.abs(offset) > 1).any(axis=1)


@pytest.mark.parametrize("kind", KINDS)
def test_every_level_keeps_each_words_ink_in_its_box_and_costs_more_contrast(kind, forms, rvl_page):
    """At every level the box check passes; the measured effect (the card's: the ink's contrast lost in the
    words' boxes) grows level by level."""
    lost = []
    for level, values in ScanQuality.severities.items():
        shift = ScanQuality(kinds=[kind], **values)
        kept, moved, words, source, ink = [], [], 0, 0.0, 0.0
        for seed, doc in enumerate([*forms, rvl_page]):
            out = shift(doc, seed)
            k, m = check_boxes(doc, out)
            kept += k.tolist()
            moved += m.tolist()
            assert not np.array_equal(out.image.to_array(), doc.image.to_array())
            if doc is not rvl_page:
                n, before, after = contrast_under_ink(doc, out)
                words, source, ink = words + n, source + before, ink + after
        kept, moved = np.array(kept), np.array(moved)
        # the ink of nearly every word is still dark where it was, and nowhere is it found moved by 2+ pixels
        assert np.median(kept) >= 0.8, (kind, level, np.median(kept))
        assert moved.mean() <= 0.03, (kind, level, moved.mean())
        lost.append((source - ink) / words)
    assert lost[0] > 1 and all(a < b for a, b in zip(lost, lost[1:])), (kind, lost)


def test_a_shifted_page_fails_the_box_check(forms):
    """The check sees ink that moves: the page shifted by 4 pixels keeps little ink in place and finds it moved."""
    doc = forms[0]
    before = doc.image.to_array()
    after = np.full_like(before, 255)
    after[4:, 3:] = before[:-4, :-3]
    check = box_ink(before, after, doc.boxes, reach=5)
    assert np.median(check.kept[check.has_ink]) < 0.6
    assert (check.offset[check.has_ink] == (3, 4)).all(axis=1).mean() > 0.8


def test_same_seed_same_bytes_and_global_random_untouched(forms):
    doc = forms[1]
    shift = ScanQuality()
    random.seed(123)
    np.random.seed(456)
    py_state, np_state = random.getstate(), np.random.get_state()
    a, b, c = shift(doc, 7), shift(doc, 7), shift(doc, 8)
    assert a.image.encoded_bytes() == b.image.encoded_bytes()
    assert not np.array_equal(a.image.to_array(), c.image.to_array())
    assert random.getstate() == py_state
    after = np.random.get_state()
    assert after[0] == np_state[0] and np.array_equal(after[1], np_state[1]) and after[2:] == np_state[2:]


def test_same_bytes_in_another_process(forms):
    """The bytes depend on the seed only, not on what the process drew before (a worker's history)."""
    import concurrent.futures as cf
    import multiprocessing as mp

    doc = forms[2]
    here = _shifted_bytes(doc)
    random.random(), np.random.random()  # the parent's global generators moved on; the child's did not
    with cf.ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as pool:
        there = pool.submit(_shifted_bytes, doc).result()
    assert here == there


def _shifted_bytes(doc) -> bytes:
    return ScanQuality(kinds=list(KINDS), pick="one")(doc, 3).image.encoded_bytes()


def test_rgb_page_stays_rgb_and_pick_one_tallies_the_kind(forms):
    doc = forms[0]
    rgb = doc.replace(image=type(doc.image).from_array(np.repeat(doc.image.to_array()[..., None], 3, axis=2)))
    out = ScanQuality(pick="one")(rgb, 1)
    assert out.image.to_array().shape == rgb.image.to_array().shape
    record = out.provenance[-1]
    assert sum(record.tallies["kind"].values()) == 1 and set(record.tallies["kind"]) <= set(KINDS)
    assert record.counts["words"] == len(doc.words) and record.counts["pixels_changed"] > 0


def test_levels_and_recipe_checks():
    assert sorted(ScanQuality.severities) == [1, 2, 3, 4, 5]
    strengths = [v["strength"] for _, v in sorted(ScanQuality.severities.items())]
    assert strengths == sorted(strengths) and strengths[-1] == 1.0
    with pytest.raises(Exception, match="kinds must be among"):
        make_shift({"shift": "scan_quality", "kinds": ["smudge"]})
    recipe = load_recipe(RECIPES / "rvl-cdip-i3.yaml")
    assert {"ink_bleed", "low_ink", "noise", "bleed_through", "dirty_drum", "fax", "mixed"} <= set(recipe.configs)
    funsd_i = load_recipe(RECIPES / "funsd-i.yaml")
    assert "scan_mixed" in funsd_i.configs


def test_funsd_c_sweeps_capture_and_every_scan_kind_at_five_levels():
    recipe = load_recipe(RECIPES / "funsd-c.yaml")
    for kind in KINDS:
        for level in range(1, 6):
            assert recipe.configs[f"scan_{kind}@{level}"] == [
                {"shift": "scan_quality", "kinds": [kind], "strength": round(0.2 * level, 1)}]
            assert recipe.levels[f"scan_{kind}@{level}"] == (f"scan_{kind}", level)
    assert [c for c in recipe.configs if c.startswith("capture")] == [f"capture@{s}" for s in range(1, 6)]
    assert "scan_fax" not in recipe.configs and "capture" not in recipe.configs
