"""``style: paper``: Moradi & Samwald's reference scripts' selection and operators, against a transcription of them.

Three kinds of checks per kind: draw for draw (dogood's operator fed Python's ``random.Random(seed).randint``
retraces the transcription in tests/moradi_reference.py, seeds 0-39, and the scripts' own outputs on their
first data row with ``seed(1)``); the distribution of edits through the shift on a document (numpy draws,
300 seeds) against the transcription's (Python draws, 300 seeds), by a chi-square test per feature; and the
fixed sentences of the reading notes (outputs the scripts give, and where they hang, crash or garble, what
style paper does instead).
"""

from __future__ import annotations

import os

import pytest

from dogood.core.errors import SourceError


def test_the_tagger_gives_penn_tags_offline(tagger):
    toks = "The quick brown foxes jumped over 3 lazy dogs and he runs quickly .".split()
    assert tagger.pos_tags(toks) == ["DT", "JJ", "NN", "NNS", "VBD", "IN", "CD", "JJ", "NNS", "CC", "PRP", "VBZ", "RB",
                                     "."]
    assert tagger.pos_tags(["It", "'s", "raining", "."]) == ["PRP", "VBZ", "VBG", "."]
    assert tagger.pos_tags([]) == []


def test_a_missing_or_foreign_tagger_model_is_an_error_naming_the_extra(tagger, monkeypatch, tmp_path):
    import pickle

    from dogood.language import pos_tagger

    monkeypatch.setattr(pos_tagger.importlib.util, "find_spec", lambda name: None)
    pos_tagger.tagger.cache_clear()
    try:
        with pytest.raises(SourceError, match=r'pip install "dogood\[pos\]"'):
            pos_tagger.tagger()
        assert not pos_tagger.available()
        monkeypatch.undo()
        monkeypatch.setattr(pos_tagger, "MODEL_SHA256", "0" * 64)
        with pytest.raises(SourceError, match="SHA-256 differs"):
            pos_tagger.tagger()
    finally:
        monkeypatch.undo()
        pos_tagger.tagger.cache_clear()
    evil = pickle.dumps(os.system)  # a pickle naming anything but set is refused, not run
    with pytest.raises(pickle.UnpicklingError, match="refused"):
        pos_tagger._ModelUnpickler(__import__("io").BytesIO(evil)).load()
