"""``style: paper``: Moradi & Samwald's reference scripts' operators on one sample of a document.

The reference scripts (mmoradi-iut/NLP-perturbation) work on a sentence's
tokens (``nltk.word_tokenize``); here a sample (an entity's words, or a text
line: :mod:`dogood.shifts.text._samples`) is tokenized the same way
(:mod:`dogood.language.sample_tokens`), the reference's selection and
operator act on its tokens (:mod:`dogood.language.moradi_ops`,
:mod:`dogood.language.moradi_verbs`) with the document's generator, and the
edited tokens go back into the words: a word keeps its box; a word whose new
text is several words (a repeated token, ``is not``, a multi-word synonym)
keeps its box for the first and the others get boxes beside it, each as wide
as its share of characters (:func:`dogood.language.edits.box_beside`); a word
left with no text is deleted. A sample never loses all its words.

Per sample, as the scripts do: one token for each character kind but the
misspelling (``per_sample`` tokens: the paper's PPS; the scripts have 1),
up to ``per_sample`` words for misspelling and synonym (the scripts: 3), one
token for word deletion and repetition (``per_sample``), one block for word
order and every matching verb for negation, singular/plural verb and verb
tense (``per_sample`` does not apply to these four).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dogood.core.document import Document, Word
from dogood.language.chars import MISSPELLINGS
from dogood.language.edits import Edits, box_beside
from dogood.language.moradi_ops import (
    CHAR_MIN_LENGTH,
    WORD_MIN_LENGTH,
    char_edit,
    derange_block,
    misspell_tokens,
    numpy_randint,
    pick_token,
    replace_synonyms,
)
from dogood.language.moradi_verbs import RULES
from dogood.language.sample_tokens import Token, tokenize_words, words_from_outputs

#: The word-order script keeps one of these as the sample's last token at the end.
FINAL_MARKS = frozenset({".", "?", "!", ";", ","})
#: Word kinds that rewrite a whole sample (``per_sample`` does not apply).
WHOLE_SAMPLE_KINDS = ("negation", "singular_plural_verb", "verb_tense", "word_order")


def _view(doc: Document, sample: Sequence[int]) -> tuple[list[str], list[Token]]:
    texts = [doc.words[i].text for i in sample]
    return texts, tokenize_words(texts)


def record(doc: Document, sample: Sequence[int], texts: list[str], tokens: list[Token], outputs: dict[int, str],
           edits: Edits, spaced: bool = False) -> bool:
    """Put the edited tokens back into the sample's words as edits; ``False`` (nothing recorded) when nothing
    changes or the sample would lose all its words."""
    new = words_from_outputs(texts, tokens, outputs, spaced=spaced)
    if not new or all(not new.get(w, [True]) for w in range(len(texts))):
        return False
    for w, parts in new.items():
        i = sample[w]
        if not parts:
            edits.delete.add(i)
            continue
        if parts[0] != texts[w]:
            edits.replace[i] = parts[0]
        if len(parts) > 1:
            word = doc.words[i]
            width, box, added = word.box[2] - word.box[0], word.box, []
            for part in parts[1:]:
                box = box_beside(box, max(1, round(width * len(part) / max(len(word.text), 1))), doc.width)
                added.append(Word(part, box))
            edits.insert[i] = added
    return True


def perturb_chars(kind: str, doc: Document, sample: Sequence[int], k: int, rng: np.random.Generator,
                  edits: Edits) -> int:
    """A character kind on one sample: ``k`` tokens (misspelling: up to ``k`` words); how many changed."""
    texts, tokens = _view(doc, sample)
    spelled = [t.text for t in tokens]
    randint = numpy_randint(rng)
    if kind == "misspelling":
        outputs = misspell_tokens(spelled, MISSPELLINGS, k, randint)
    else:
        outputs = {}
        picked: set[int] = set()
        as_written = [texts[t.word][t.start:t.end] == t.text for t in tokens]
        for _ in range(k):
            j = pick_token(spelled, CHAR_MIN_LENGTH, randint, lambda i: i not in picked and as_written[i])
            if j is None:
                break
            picked.add(j)
            new = char_edit(spelled[j], kind, randint)
            if new is not None and new != spelled[j]:
                outputs[j] = new
    return len(outputs) if outputs and record(doc, sample, texts, tokens, outputs, edits) else 0


def perturb_words(kind: str, doc: Document, sample: Sequence[int], k: int, rng: np.random.Generator,
                  edits: Edits) -> int:
    """A word kind on one sample; how many perturbations it made (0: the sample is unchangeable)."""
    texts, tokens = _view(doc, sample)
    if kind == "word_order":
        return _word_order(doc, sample, texts, tokens, rng, edits)
    spelled = [t.text for t in tokens]
    raw = [texts[t.word][t.start:t.end] for t in tokens]
    randint = numpy_randint(rng)
    outputs: dict[int, str] = {}
    spaced = True
    made = 0
    if kind in ("deletion", "repetition"):
        spaced = False
        for _ in range(k):
            left = sum(1 for j in range(len(tokens)) if j not in outputs)

            def allowed(i: int) -> bool:
                return i not in outputs and (kind == "repetition" or left > 1)

            j = pick_token(spelled, WORD_MIN_LENGTH, randint, allowed)
            if j is None:
                break
            outputs[j] = "" if kind == "deletion" else raw[j] + " " + raw[j]
        made = len(outputs)
    else:
        from dogood.language.pos_tagger import pos_tags

        tags = pos_tags(spelled)
        if kind == "synonym":
            from dogood.language.lexicons import wordnet

            outputs = replace_synonyms(spelled, tags, k, randint, wordnet())
            made = len(outputs)
        else:
            outputs, made = RULES[kind](spelled, tags)
    if not outputs or not record(doc, sample, texts, tokens, outputs, edits, spaced=spaced):
        return 0
    return made


def _word_order(doc: Document, sample: Sequence[int], texts: list[str], tokens: list[Token],
                rng: np.random.Generator, edits: Edits) -> int:
    """The word-order script on a sample's words: their texts move between the words' boxes. A final ``.``,
    ``?``, ``!``, ``;`` or ``,`` token stays at the end (a word of its own stays in place; one written on the
    last word stays on the last box). Needs more than three tokens (the script) and three words to move."""
    if len(tokens) <= 3:
        return 0
    units = list(texts)
    mark = ""
    last = tokens[-1]
    if last.text in FINAL_MARKS:
        if last.start == 0 and last.end == len(texts[-1]):
            units.pop()
        else:
            mark = texts[-1][last.start:]
            units[-1] = texts[-1][:last.start]
    n = len(units)
    if n < 3:
        return 0
    order = derange_block(n, numpy_randint(rng))
    changed = False
    for p in range(n):
        new = units[order[p]] + (mark if p == n - 1 else "")
        if new != texts[p]:
            edits.replace[sample[p]] = new
            changed = True
    return 1 if changed else 0


def style_note(style: str, kind: str, per_sample: int) -> str:
    """The card's line on a config's style."""
    if style != "paper":
        return (f"Style `dogood`: dogood's `{kind}`, inspired by Moradi & Samwald (2021) but not their code; up to "
                f"{per_sample} perturbation(s) per sample.")
    if kind in WHOLE_SAMPLE_KINDS:
        count = "one block per sample" if kind == "word_order" else "every matching verb of a sample"
    elif kind in ("misspelling", "synonym"):
        count = f"up to {per_sample} word(s) per sample (the scripts: 3)"
    else:
        count = f"{per_sample} token(s) per sample (the scripts: 1)"
    return (f"Style `paper`: `{kind}` as Moradi & Samwald's reference scripts (mmoradi-iut/NLP-perturbation) do it, "
            f"their bugs fixed (dogood's documentation, moradi-samwald.md); {count}.")
