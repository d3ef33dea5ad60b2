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


def test_shadow_darkens_one_side_of_the_page(forms):
    for seed, doc in enumerate(forms):
        before = doc.image.to_array().astype(int)
        after = level("shadow", 5)(doc, seed).image.to_array().astype(int)
        assert (after <= before).all()
        darker = (before - after) > 0.3 * before  # the umbra: light cut by more than 30% (strength 0.75)
        lit = after == before
        assert darker.mean() > 0.1 and lit.mean() > 0.1
        # the umbra and the lit part lie on either side of one edge: a straight line separates most of them
        ys, xs = np.nonzero(darker)
        ly, lx = np.nonzero(lit)
        direction = np.array([xs.mean() - lx.mean(), ys.mean() - ly.mean()])
        cut = (np.array([xs, ys]).T @ direction).min()
        assert ((np.array([lx, ly]).T @ direction) < cut).mean() > 0.9
