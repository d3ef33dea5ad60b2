"""``style: paper``: Moradi & Samwald's reference scripts' selection and operators, against a transcription of them.

Three kinds of checks per kind: draw for draw (dogood's operator fed Python's ``random.Random(seed).randint``
retraces the transcription in tests/moradi_reference.py, seeds 0-39, and the scripts' own outputs on their
first data row with ``seed(1)``); the distribution of edits through the shift on a document (numpy draws,
300 seeds) against the transcription's (Python draws, 300 seeds), by a chi-square test per feature; and the
fixed sentences of the reading notes (outputs the scripts give, and where they hang, crash or garble, what
style paper does instead).
"""

from __future__ import annotations

from dogood.language.sample_tokens import tokenize_words, words_from_outputs


def test_words_tokenize_as_word_tokenize_and_go_back_into_their_words():
    texts = ["He", "said", '"I', "can't", 'go."', "Date:", "12/3"]
    toks = tokenize_words(texts)
    assert [t.text for t in toks] == ["He", "said", "``", "I", "ca", "n't", "go", ".", "''", "Date", ":", "12/3"]
    assert all(texts[t.word][t.start:t.end] in (t.text, '"') for t in toks)
    # a changed token goes back into its word; an emptied word is gone; an output with a space is two words
    j = {t.text: k for k, t in enumerate(toks)}
    assert words_from_outputs(texts, toks, {j["Date"]: "Daet"}) == {5: ["Daet:"]}
    assert words_from_outputs(texts, toks, {j["ca"]: "", j["n't"]: ""}) == {3: []}
    assert words_from_outputs(texts, toks, {j["said"]: "said said"}) == {1: ["said", "said"]}
    it = tokenize_words(["It's"])
    assert words_from_outputs(["It's"], it, {1: "is not"}, spaced=True) == {0: ["It", "is", "not"]}
