"""Text shifts: each changes word texts (and, with ``render``, their pixels); boxes and labels stay with their words.

One module per shift, named by its recipe key. Their shared machinery (word
splitting, lexicons, selection, the word budget, edits, value generators,
character edits) is in :mod:`dogood.text`.
"""

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

__all__ = ["BackgroundAdversarial", "BackgroundSynonym", "BackgroundTypo", "BertAttack", "CharPerturbation",
           "CharacterDeletion", "EmbeddingSwap", "HomoglyphSwap", "KeyDrop", "NumberSwap", "ValueTextAugment",
           "WordPerturbation"]
