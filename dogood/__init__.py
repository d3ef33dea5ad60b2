"""dogood: turn document-AI datasets into out-of-distribution benchmark datasets.

The flow is one way: a source yields :class:`Document` records, a recipe's
chain of shifts changes them (seeded per document), a writer stores them as a
Hugging Face dataset. The same shifts run at training time on rows
(:func:`transform`, :class:`Compose`, :class:`OneOf`, :mod:`dogood.augment`).
See ``README.md``.
"""

from dogood.core.document import Document, Entity, PageImage, QAPair, ShiftRecord, Word
from dogood.version import __version__

__all__ = ["Compose", "Document", "Entity", "OneOf", "PageImage", "QAPair", "ShiftRecord", "Step", "Transform",
           "Word", "__version__", "transform"]

_AUGMENT = ("Compose", "OneOf", "Step", "Transform", "transform")


def __getattr__(name: str):
    """``dogood.Compose``, ``dogood.transform``, ...: imported on first use (they load every shift)."""
    if name in _AUGMENT:
        import dogood.augment

        return getattr(dogood.augment, name)
    raise AttributeError(f"module 'dogood' has no attribute {name!r}")
