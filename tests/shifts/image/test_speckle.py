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


def test_speckle_adds_to_the_same_specks_and_texture_darkens_the_paper_more_than_the_ink(forms):
    doc = forms[1]
    before = doc.image.to_array().astype(int)
    changed = []
    for s in LEVELS:
        after = level("speckle", s)(doc, 3).image.to_array().astype(int)
        changed.append(np.abs(after - before) > 32)
    for low, high in zip(changed, changed[1:]):
        # nested: the specks of a level stay at the next (but where a new light speck lands on an old dark one)
        assert low.sum() < high.sum() and (low & ~high).sum() <= 0.005 * low.sum()
    after = level("paper_texture", 5)(doc, 3).image.to_array().astype(int)
    assert (after <= before).all()
    paper, ink = before > 220, before < 60
    assert (before - after)[paper].mean() > 5 * max((before - after)[ink].mean(), 0.5)
