"""Shifts: image, text and layout distribution shifts on :class:`~dogood.document.Document`.

One shift per module; each registers itself under its ``name`` for recipes.
Text shifts live in :mod:`dogood.shifts.text` (one module per recipe key),
their machinery in :mod:`dogood.text`.
"""

from dogood.shifts.base import SHIFTS, Shift, SkipDocument, make_shift
from dogood.shifts.distort import DistortPage
from dogood.shifts.merge import MergeBoxes
from dogood.shifts.natural_background import NaturalBackground
from dogood.shifts.move import MoveEntities
from dogood.shifts.ocr_level import (
    BackgroundDrop,
    BoxStretch,
    CenterShift,
    GlobalShuffle,
    MarginPadding,
    NeighborBackgroundDrop,
    NeighborShuffle,
    NonNeighborShuffle,
    ValueLocationAugment,
)
from dogood.shifts.reocr import ReOCR
from dogood.shifts.text import (
    BackgroundAdversarial,
    BackgroundSynonym,
    BackgroundTypo,
    BertAttack,
    CharacterDeletion,
    CharPerturbation,
    EmbeddingSwap,
    HomoglyphSwap,
    KeyDrop,
    NumberSwap,
    ValueTextAugment,
    WordPerturbation,
)

__all__ = [
    "SHIFTS",
    "Shift",
    "SkipDocument",
    "make_shift",
    "BackgroundAdversarial",
    "BackgroundDrop",
    "BoxStretch",
    "CenterShift",
    "GlobalShuffle",
    "MarginPadding",
    "NeighborBackgroundDrop",
    "NeighborShuffle",
    "NonNeighborShuffle",
    "ValueLocationAugment",
    "BackgroundSynonym",
    "BackgroundTypo",
    "BertAttack",
    "CharacterDeletion",
    "CharPerturbation",
    "DistortPage",
    "EmbeddingSwap",
    "HomoglyphSwap",
    "KeyDrop",
    "MergeBoxes",
    "MoveEntities",
    "NaturalBackground",
    "NumberSwap",
    "ReOCR",
    "ValueTextAugment",
    "WordPerturbation",
]
