"""`paper_texture`: level 5 stays within the grain and fibres real scans show (dogood.measures.paper_grain)."""

from __future__ import annotations

import numpy as np

from dogood.measures.paper_grain import blank_tiles, paper_grain
from dogood.shifts import SHIFTS


def test_level_5_is_within_real_paper(funsd_test, funsd_train):
    """On the blank paper of FUNSD test pages, level 5's grain and fibres stay below the grainiest real pages
    (FUNSD train's, measured alike); dogood before issue 40 drew fibres covering a third of the blank paper (0.30,
    against 0.001 at most on real scans) and grain of 11.6 grey levels."""
    real = [paper_grain(funsd_train.load(i).image.to_array()) for i in funsd_train.ids()[:40]]
    real = np.array([g[:2] for g in real if g.blank >= 0.05])
    shift = SHIFTS["paper_texture"](**SHIFTS["paper_texture"].severities[5])
    shifted = []
    for doc_id in funsd_test.ids()[:8]:
        doc = funsd_test.load(doc_id)
        blank = blank_tiles(doc.image.to_array())
        shifted.append(paper_grain(shift(doc, 0).image.to_array(), blank)[:2])
    shifted = np.array(shifted)
    assert np.median(shifted[:, 0]) <= np.percentile(real[:, 0], 99)
    assert np.median(shifted[:, 1]) <= max(np.percentile(real[:, 1], 99), 0.001)
    assert np.median(shifted[:, 0]) > np.median(real[:, 0])  # and it still shows: grain above the median page


def test_levels_nest_and_grow(funsd_test):
    doc = funsd_test.load(funsd_test.ids()[0])
    blank = blank_tiles(doc.image.to_array())
    cls = SHIFTS["paper_texture"]
    grains = [paper_grain(cls(**cls.severities[level])(doc, 0).image.to_array(), blank) for level in (1, 3, 5)]
    assert grains[0].contrast < grains[1].contrast < grains[2].contrast
    fibres = [cls(**cls.severities[level])(doc, 0).provenance[-1].counts["fibres"] for level in (1, 3, 5)]
    assert fibres[0] <= fibres[1] <= fibres[2] and fibres[2] <= 5


def test_blank_tiles_leave_ink_out():
    page = np.full((128, 128), 250, np.uint8)
    page[62:66, 10:100] = 0  # a rule, across two rows of tiles
    blank = blank_tiles(page)
    assert not blank[32:96].any() and blank[96:].all() and blank[:32].all()
    grain = paper_grain(page)
    assert grain.contrast == 0 and grain.fibres == 0 and 0 < grain.blank < 1
