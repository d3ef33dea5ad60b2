"""Re-rendering changed words into the page image, so text and pixels agree.

(To be written: see ``render_words``.)
"""

from __future__ import annotations

from collections.abc import Iterable

from dogood.document import Document


def render_words(doc: Document, indices: Iterable[int], original: Document | None = None) -> Document:
    """``doc`` with the pixels of words ``indices`` erased and their current text drawn in their boxes."""
    raise NotImplementedError("render_words is not written yet")
