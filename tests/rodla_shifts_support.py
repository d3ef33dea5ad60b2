"""What the RoDLA-style image shifts' tests share (test_illumination.py, test_rodla_family.py, test_watermark.py, test_motion_blur.py, test_shadow.py, test_rotate.py, test_speckle.py, test_defocus.py): imports, data and fixtures."""

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

#: Everything above, private helpers too, for the test files that import it with *.
__all__ = [name for name in dir() if not name.startswith("__")]
