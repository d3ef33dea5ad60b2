"""Shifts: image, text and layout distribution shifts on :class:`~dogood.document.Document`.

One shift per module; each registers itself under its ``name`` for recipes.
"""

from dogood.shifts.base import SHIFTS, Shift, SkipDocument, make_shift
from dogood.shifts.bert_attack import BertAttack
from dogood.shifts.char_deletion import CharacterDeletion
from dogood.shifts.char_perturbation import CharPerturbation
from dogood.shifts.distort import DistortPage
from dogood.shifts.embedding_swap import EmbeddingSwap
from dogood.shifts.form_text import BackgroundAdversarial, BackgroundSynonym, BackgroundTypo, KeyDrop, ValueTextAugment
from dogood.shifts.homoglyph_swap import HomoglyphSwap
from dogood.shifts.merge import MergeBoxes
from dogood.shifts.natural_background import NaturalBackground
from dogood.shifts.move import MoveEntities
from dogood.shifts.number_swap import NumberSwap
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
from dogood.shifts.word_perturbation import WordPerturbation

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
