"""augraphy's augmentations run on a page with every random draw seeded from a shift's generator.

augraphy (https://github.com/sparkfish/augraphy) draws from Python's global
:mod:`random` and numpy's global generator, and some augmentations read
``./augraphy_cache`` images from the working directory. :func:`seeded_globals`
seeds both global generators from the document's generator and puts their
states back afterwards (under a lock, so threads do not interleave), so the
same seed gives the same bytes in any process and nothing outside changes.
:func:`run_augmentations` converts the page to augraphy's BGR (grayscale
stays grayscale), applies each augmentation in order, and refuses any that
changes the page's size. Written here because augraphy has no seed argument.
"""

from __future__ import annotations

import contextlib
import random
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import cv2
import numpy as np

from dogood.core.errors import DogoodError
from dogood.core.extras import install_line

_LOCK = threading.RLock()


class AugraphyMissing(DogoodError):
    """augraphy is not installed."""


def augraphy():
    """The ``augraphy`` module, or :class:`AugraphyMissing` with the install line."""
    try:
        import augraphy
    except ImportError:
        raise AugraphyMissing(f"the scan-quality shift needs augraphy: {install_line('scan')}") from None
    return augraphy


@contextlib.contextmanager
def seeded_globals(rng: np.random.Generator) -> Iterator[None]:
    """Seed :mod:`random` and numpy's global generator from ``rng`` for the block; restore both after."""
    seed = int(rng.integers(0, 2**32))
    with _LOCK:
        py_state, np_state = random.getstate(), np.random.get_state()
        random.seed(seed)
        np.random.seed(seed)
        try:
            yield
        finally:
            random.setstate(py_state)
            np.random.set_state(np_state)


def run_augmentations(pixels: np.ndarray, augmentations: Sequence[Any], rng: np.random.Generator) -> np.ndarray:
    """``pixels`` (``HxW`` grayscale or ``HxWx3`` RGB ``uint8``) through ``augmentations`` in order, seeded from
    ``rng``; the result has the input's shape. Raises ``ValueError`` when an augmentation changes the page size."""
    rgb = pixels.ndim == 3
    image = cv2.cvtColor(pixels, cv2.COLOR_RGB2BGR) if rgb else np.array(pixels)
    with seeded_globals(rng):
        for aug in augmentations:
            out = aug(image, force=True)
            out = np.asarray(out[0] if isinstance(out, list) else out)
            if out.shape[:2] != image.shape[:2]:
                raise ValueError(f"{type(aug).__name__} changed the page size from {image.shape[:2]} to {out.shape[:2]}")
            if out.ndim != image.ndim:
                out = cv2.cvtColor(out, cv2.COLOR_GRAY2BGR) if image.ndim == 3 else cv2.cvtColor(out, cv2.COLOR_BGR2GRAY)
            image = np.ascontiguousarray(out, dtype=np.uint8)
    return cv2.cvtColor(image, cv2.COLOR_BGR2RGB) if rgb else image
