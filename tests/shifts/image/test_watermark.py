"""RoDLA's perturbations as dogood shifts (issue 29): rotate, motion_blur, defocus, watermark, speckle, paper_texture,
illumination and shadow, on real FUNSD forms. Pixels change where each says, boxes hold their words' ink, labels are
kept, the same seed gives the same bytes, and the levels of one config share their draws and grow in effect."""

from __future__ import annotations

import math

import random

import cv2

import numpy as np

import pytest

from dogood.measures.box_ink import box_ink

from dogood.measures.effects import effects, measured

from dogood.page.affine import rotation

from dogood.page.warp import ink_mask

from dogood.pipeline.stats import add

from dogood.shifts import SHIFTS, make_shift

from dogood.shifts.image._pixels import paper_tone

from dogood.shifts.image.defocus import disc_kernel

from dogood.shifts.image.motion_blur import line_kernel

from dogood.shifts.levels import LEVELS

NEW = ("rotate", "motion_blur", "defocus", "watermark", "speckle", "paper_texture", "illumination", "shadow")

PIXEL_ONLY = NEW[1:]

FACTORS = {"text", "word_order", "word_set", "box_position", "box_size", "reading_order", "ink", "background",
           "geometry", "quality"}

@pytest.fixture(scope="module")
def forms(funsd_test):
    return [funsd_test.load(i) for i in funsd_test.ids()[:3]]

def level(name: str, s: int, **extra):
    return make_shift({"shift": name, **SHIFTS[name].severities[s], **extra})

@pytest.fixture(scope="module")
def funsd_p(funsd_dir, tmp_path_factory):
    """``funsd-p`` built on one FUNSD test form: every perturbation at every level."""
    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import load_recipe

    out = tmp_path_factory.mktemp("funsd-p") / "funsd-p"
    build(load_recipe("funsd-p"), out, source_path=funsd_dir, limit=1)
    return out


def test_watermark_changes_only_what_its_mark_covers_and_never_lightens_ink(forms):
    from dogood.shifts.image.watermark import place

    shift = level("watermark", 4, colors=["gray"])
    for seed, doc in enumerate(forms):
        before = doc.image.to_array()
        mark = shift.draw(np.random.default_rng(seed), (doc.width, doc.height))
        coverage = place(mark["mask"], mark["angle"], mark["centre"], (doc.width, doc.height))
        after = shift(doc, seed).image.to_array()
        assert after.ndim == 2  # a grey mark keeps a grey page grey
        assert np.array_equal(after[coverage == 0], before[coverage == 0])
        assert (after <= before).all()  # multiplied: nothing gets lighter, ink stays as dark as it was
        under = (coverage > 0.999) & (before > 200)  # paper under the mark takes 65% of its grey (110)
        expected = before[under] * (1 - 0.65 * (1 - 110 / 255))
        assert under.sum() > 1000 and np.abs(after[under] - expected).max() <= 1
    red = level("watermark", 2, colors=["red"])(forms[0], 0).image.to_array()
    assert red.ndim == 3 and (red[..., 0].astype(int) >= red[..., 2]).all()
