"""An offline English part-of-speech tagger (Penn Treebank tags): NLTK's averaged perceptron with Honnibal's model.

Moradi & Samwald's word-level scripts tag with ``nltk.pos_tag``, NLTK's
averaged perceptron, whose model NLTK downloads at run time. The same
algorithm (Honnibal's greedy averaged perceptron, trained on the WSJ part of
the Penn Treebank) ships its model inside a PyPI package,
``textblob-aptagger`` (MIT, pinned in the ``pos`` extra:
``pip install "dogood[pos]"``). Its pickle holds ``(weights, tagdict,
classes)`` for the features NLTK's :class:`~nltk.tag.perceptron.PerceptronTagger`
computes (the two implementations' feature and normalisation code are the
same), so NLTK's class runs it unchanged. The weights are not known to be
byte-identical to NLTK's own download.

The package itself is never imported (its import is broken on Python 3):
its folder is found with :func:`importlib.util.find_spec` and the pickle is
read, after its SHA-256 is checked against 0.2.0's, by an unpickler that
accepts nothing but dicts, lists, strings, numbers and sets. Nothing is
downloaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import pickle
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from dogood.core import fs
from dogood.core.errors import SourceError

#: The PyPI package that holds the model, and the model's file in it.
MODEL_PACKAGE = "textblob_aptagger"
MODEL_FILE = "trontagger-0.1.0.pickle"
#: The model file's SHA-256 in textblob-aptagger 0.2.0: tags (and so the data built with them) depend on it.
MODEL_SHA256 = "1109164b3d28dce58f96b763128bab2fd8754c3921fd3330de2724ac6d1ada7c"
#: How to get it.
INSTALL = 'pip install "dogood[pos]"'


class _ModelUnpickler(pickle.Unpickler):
    """Reads the model pickle, refusing any class but ``set`` (the only one it names)."""

    def find_class(self, module: str, name: str):
        if module in ("__builtin__", "builtins") and name == "set":
            return set
        raise pickle.UnpicklingError(f"the tagger model names {module}.{name}: refused")


def model_path() -> Path:
    """The model file inside the installed ``textblob-aptagger``; :class:`SourceError` naming the extra if absent."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    folders = list(spec.submodule_search_locations or ()) if spec is not None else []
    for folder in folders:
        path = Path(folder) / MODEL_FILE
        if path.is_file():
            return path
    raise SourceError(f"the part-of-speech tagger needs its model from the package textblob-aptagger: {INSTALL}")


@lru_cache(maxsize=1)
def tagger():
    """NLTK's :class:`~nltk.tag.perceptron.PerceptronTagger` loaded with the packaged model (once per process)."""
    try:
        from nltk.tag.perceptron import PerceptronTagger
    except ImportError:
        raise SourceError(f"the part-of-speech tagger needs nltk: {INSTALL}") from None
    path = model_path()
    try:
        data = fs.read_bytes(path, what="tagger model")
    except (OSError, fs.FileRefused) as exc:
        raise SourceError(f"cannot read the tagger model {path}: {exc}; reinstall it: {INSTALL}") from None
    if hashlib.sha256(data).hexdigest() != MODEL_SHA256:
        raise SourceError(f"the tagger model {path} is not textblob-aptagger 0.2.0's (its SHA-256 differs): {INSTALL}")
    try:
        weights, tagdict, classes = _ModelUnpickler(io.BytesIO(data), encoding="latin1").load()
    except (pickle.UnpicklingError, ValueError, EOFError) as exc:
        raise SourceError(f"cannot read the tagger model {path}: {exc}; reinstall it: {INSTALL}") from None
    out = PerceptronTagger(load=False)
    out.model.weights = weights
    out.tagdict = tagdict
    out.classes = set(classes)
    out.model.classes = out.classes
    return out


def available() -> bool:
    """Whether the tagger can be loaded (its model package is installed)."""
    try:
        tagger()
    except SourceError:
        return False
    return True


def pos_tags(tokens: Sequence[str]) -> list[str]:
    """The Penn Treebank tag of each token (tokens as NLTK's word tokenizer spells them), in one pass."""
    if not tokens:
        return []
    return [tag for _, tag in tagger().tag(list(tokens))]


#: Penn Treebank tags to the universal tags of Petrov, Das and McDonald (2012), as NLTK's ``en-ptb.map`` maps them
#: (what TextAttack's ``PartOfSpeech`` constraint compares: ``nltk.pos_tag(..., tagset="universal")``); anything
#: else (punctuation, symbols) is ``.``.
UNIVERSAL = {**{t: "NOUN" for t in ("NN", "NNS", "NNP", "NNPS")},
             **{t: "VERB" for t in ("VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "MD")},
             **{t: "ADJ" for t in ("JJ", "JJR", "JJS")}, **{t: "ADV" for t in ("RB", "RBR", "RBS", "WRB")},
             **{t: "PRON" for t in ("PRP", "PRP$", "WP", "WP$")}, **{t: "DET" for t in ("DT", "PDT", "WDT", "EX")},
             "IN": "ADP", "CC": "CONJ", "CD": "NUM", "RP": "PRT", "TO": "PRT", "POS": "PRT", "UH": "X", "FW": "X",
             "SYM": "X", "LS": "X"}


@lru_cache(maxsize=65536)
def universal_tag(word: str) -> str:
    """The universal tag (:data:`UNIVERSAL`) of ``word`` tagged alone: a word attacked on its own, as Do-GOOD's
    scripts call TextAttack on each word."""
    return UNIVERSAL.get(pos_tags([word])[0], ".")
