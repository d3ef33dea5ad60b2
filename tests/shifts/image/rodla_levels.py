"""Helpers the RoDLA-style image shifts' tests share (test_illumination.py, test_rodla_family.py,
test_watermark.py, test_motion_blur.py, test_shadow.py, test_rotate.py, test_speckle.py, test_defocus.py): the
shifts' names, the factor names and ``level`` (a shift at one of its severity levels). The ``forms`` and
``funsd_p`` fixtures are in tests/shifts/image/conftest.py."""

from __future__ import annotations

from dogood.shifts import SHIFTS, make_shift

NEW = ("rotate", "motion_blur", "defocus", "watermark", "speckle", "paper_texture", "illumination", "shadow")

PIXEL_ONLY = NEW[1:]

FACTORS = {"text", "word_order", "word_set", "box_position", "box_size", "reading_order", "ink", "background",
           "geometry", "quality"}


def level(name: str, s: int, **extra):
    return make_shift({"shift": name, **SHIFTS[name].severities[s], **extra})
