"""dogood: turn document-AI datasets into out-of-distribution benchmark datasets.

The flow is one way: a source yields :class:`Document` records, a recipe's
chain of shifts changes them (seeded per document), a writer stores them as a
Hugging Face dataset. See ``README.md``.
"""

from importlib.metadata import PackageNotFoundError, version

from dogood.document import Document, Entity, PageImage, QAPair, ShiftRecord, Word

try:
    __version__ = version("dogood")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.3.0"

__all__ = ["Document", "Entity", "PageImage", "QAPair", "ShiftRecord", "Word", "__version__"]
