"""Shifts: image, text and layout distribution shifts on :class:`~dogood.core.document.Document`.

One shift per module, ``dogood/shifts/<family>/<recipe key>.py`` (``image/``,
``layout/``, ``text/``); each registers itself under its ``name`` for recipes
when imported here. Shared machinery lives outside the shift modules
(:mod:`dogood.language`, :mod:`dogood.shifts.layout._relayout`, :mod:`dogood.page.warp`, :mod:`dogood.page.ink`).
"""

from dogood.shifts.base import SHIFTS, Shift, SkipDocument, make_shift
from dogood.shifts.image.capture import CapturePage
from dogood.shifts.image.defocus import Defocus
from dogood.shifts.image.distort import DistortPage
from dogood.shifts.image.illumination import Illumination
from dogood.shifts.image.motion_blur import MotionBlur
from dogood.shifts.image.natural_background import NaturalBackground
from dogood.shifts.image.paper_texture import PaperTexture
from dogood.shifts.image.reocr import ReOCR
from dogood.shifts.image.rotate import RotatePage
from dogood.shifts.image.scan_quality import ScanQuality
from dogood.shifts.image.shadow import Shadow
from dogood.shifts.image.speckle import Speckle
from dogood.shifts.image.watermark import Watermark
from dogood.shifts.layout.bg_drop import BackgroundDrop
from dogood.shifts.layout.box_stretch import BoxStretch
from dogood.shifts.layout.center_shift import CenterShift
from dogood.shifts.layout.global_shuffle import GlobalShuffle
from dogood.shifts.layout.margin_padding import MarginPadding
from dogood.shifts.layout.merge import MergeBoxes
from dogood.shifts.layout.move import MoveEntities
from dogood.shifts.layout.neighbor_bg_drop import NeighborBackgroundDrop
from dogood.shifts.layout.neighbor_shuffle import NeighborShuffle
from dogood.shifts.layout.non_neighbor_shuffle import NonNeighborShuffle
from dogood.shifts.layout.value_location_augment import ValueLocationAugment
from dogood.shifts.text.bert_attack import BertAttack
from dogood.shifts.text.bg_adversarial import BackgroundAdversarial
from dogood.shifts.text.bg_synonym import BackgroundSynonym
from dogood.shifts.text.bg_typo import BackgroundTypo
from dogood.shifts.text.char_deletion import CharacterDeletion
from dogood.shifts.text.char_perturbation import CharPerturbation
from dogood.shifts.text.embedding_swap import EmbeddingSwap
from dogood.shifts.text.homoglyph_swap import HomoglyphSwap
from dogood.shifts.text.key_drop import KeyDrop
from dogood.shifts.text.number_swap import NumberSwap
from dogood.shifts.text.value_text_augment import ValueTextAugment
from dogood.shifts.text.word_perturbation import WordPerturbation

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
    "CapturePage",
    "Defocus",
    "Illumination",
    "MotionBlur",
    "PaperTexture",
    "RotatePage",
    "Shadow",
    "Speckle",
    "Watermark",
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
    "ScanQuality",
    "ValueTextAugment",
    "WordPerturbation",
]
