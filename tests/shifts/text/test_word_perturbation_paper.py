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

import random

from collections import Counter

import numpy as np

import pytest

from dogood.core.document import Document, Entity, PageImage, Word

from dogood.core.errors import SourceError

from dogood.core.schema import iob_tags

from dogood.language.chars import MISSPELLINGS

from dogood.language.moradi_ops import (
    ROW_NEIGHBOURS, char_edit, derange_block, misspell_tokens, pick_token, replace_synonyms,
)

from dogood.language.moradi_verbs import negation, singular_plural_verb, subject, verb_tense

from dogood.language.sample_tokens import tokenize_words, words_from_outputs

from dogood.shifts import make_shift

from dogood.shifts.text.char_perturbation import CharPerturbation

from dogood.shifts.text.word_perturbation import WordPerturbation

from moradi_reference import (
    QWERTY, Hangs, char_script, misspelling_script, order_script, row_neighbours, synonym_script, word_script,
)

CHAR_EDITS = ("insertion", "deletion", "replacement", "swap", "repetition", "letter_case")

FIRST_ROW = "How many hearts does an octopus have?"  # the first data row of the scripts' TREC file

SENTENCES = (FIRST_ROW, "Send 1,000 copies of form B-12 to Mr. O'Neil today.", "Who wrote Hamlet?",
             "What is the diameter of a golf ball?")

SEEDS = range(300)

def tokens_of(text: str) -> list[str]:
    return [t.text for t in tokenize_words(text.split())]

def form(text: str, label: str = "question") -> Document:
    """One entity holding the words of ``text`` on one line of a wide white page."""
    words, x = [], 5
    for t in text.split():
        words.append(Word(t, (x, 10, x + 7 * len(t), 22)))
        x += 7 * len(t) + 5
    page = PageImage.from_array(np.full((40, max(x + 400, 800)), 255, np.uint8))
    return Document("hand", page, tuple(words), (Entity(0, label, tuple(range(len(words)))),))

def shifted_tokens(shift, text: str, seed: int) -> tuple[str, ...]:
    out = shift(form(text), seed)
    return tuple(tokens_of(" ".join(w.text for w in out.words)))

@pytest.fixture(scope="module")
def wordnet():
    from dogood.language.lexicons import require, wordnet

    try:
        require("synonym", "wordnet")
    except SourceError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(exc))
    return wordnet()

@pytest.fixture(scope="module")
def tagger():
    from dogood.language import pos_tagger

    try:
        pos_tagger.tagger()
    except SourceError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(exc))
    return pos_tagger

def same_distribution(ours: list, reference: list, alpha: float = 1e-3) -> float:
    """The chi-square test's p-value that two samples of outcomes come from one distribution; asserts > alpha."""
    from scipy.stats import chi2_contingency

    a, b = Counter(ours), Counter(reference)
    keys = sorted(set(a) | set(b), key=repr)
    if len(keys) < 2:
        assert a == b
        return 1.0
    p = chi2_contingency(np.array([[a[k] for k in keys], [b[k] for k in keys]])).pvalue
    assert p > alpha, (p, a.most_common(8), b.most_common(8))
    return p

def ours_char(kind: str, toks: list[str], rnd: random.Random) -> list[str] | None:
    j = pick_token(toks, 2, rnd.randint)
    if j is None:
        raise Hangs(toks)
    new = char_edit(toks[j], kind, rnd.randint)
    return None if new is None else toks[:j] + [new] + toks[j + 1:]

def char_features(old: tuple[str, ...], new: tuple[str, ...]) -> dict[str, object]:
    """What a character edit did: which token, the first and last differing positions, the letters it brought."""
    if new is None or old == new or len(old) != len(new):
        return {"outcome": "none" if new is None or old == new else "other"}
    i = next(k for k in range(len(old)) if old[k] != new[k])
    a, b = old[i], new[i]
    first = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
    last = next((k for k in range(1, min(len(a), len(b)) + 1) if a[-k] != b[-k]), 0)
    return {"token": i, "first": first, "from_end": last, "ends": (a[0], a[-1]) == (b[0], b[-1]),
            "added": "".join(sorted((Counter(b) - Counter(a)).elements()))}

def script_words(text: str, new_tokens: list[str] | None) -> tuple[str, ...] | None:
    """The words of ``text`` with the script's one changed token written into its word (None: dropped)."""
    if new_tokens is None:
        return None
    words = text.split()
    out = list(words)
    for tok, new in zip(tokenize_words(words), new_tokens):
        if new != tok.text:
            w = words[tok.word]
            out[tok.word] = w[:tok.start] + new + w[tok.end:]
    return tuple(out)

MISSPELLING_ROWS = [(word, miss) for word, misses in MISSPELLINGS.items() for miss in misses]

VERB_TABLE = [
    ("What/WP planet/NN is/VBZ known/VBN as/IN the/DT red/JJ planet/NN ?/.",
     "What planet is not known as the red planet ?", "What planet are known as the red planet ?",
     "What planet was known as the red planet ?"),
    ("He/PRP does/VBZ not/RB like/VB green/JJ eggs/NNS ./.",
     "He likes green eggs .", "He do not like green eggs .", "He did not like green eggs ."),
    ("What/WP does/VBZ a/DT barometer/NN measure/NN ?/.",
     "What does not do a barometer measure ?", "What do a barometer measure ?", "What did a barometer measure ?"),
    ("Why/WRB in/IN tennis/NN are/VBP zero/CD points/NNS called/VBN love/VB ?/.",
     "Why in tennis are not zero points called love ?", "Why in tennis is zero points called love ?",
     "Why in tennis were zero points called love ?"),
    ("They/PRP have/VBP finished/VBN the/DT work/NN ./.",
     "They have not finished the work .", "They has finished the work .", "They had finished the work ."),
    ("You/PRP can/MD swim/VB and/CC he/PRP will/MD sing/VB ./.",
     "You cannot swim and he will not sing .", None, None),
    ("I/PRP did/VBD n't/RB go/VB to/TO school/NN ./.", "I went to school .", None, "I do not go to school ."),
    ("She/PRP did/VBD not/RB go/VB to/TO school/NN ./.", "She went to school .", None,
     "She does not go to school ."),
    ("We/PRP went/VBD home/NN ./.", "We did not go home .", None, "We go home ."),
    ("The/DT man/NN was/VBD tall/JJ ./.", "The man was not tall .", "The man were tall .", "The man is tall ."),
    ("Who/WP has/VBZ not/RB eaten/VBN ?/.", "Who has eaten ?", "Who have not eaten ?", "Who had not eaten ?"),
    ("The/DT actor/NN who/WP plays/VBZ Batman/NNP lives/VBZ in/IN Paris/NNP ./.",
     "The actor who does not play Batman does not live in Paris .", "The actor who play Batman live in Paris .",
     "The actor who played Batman lived in Paris ."),
]

VERB_FIXES = [
    ("He/PRP does/VBZ n't/RB really/RB like/IN green/JJ eggs/NNS ./.", "negation", "He",
     "He does really like green eggs ."),  # the script drops everything after 'does' (no VB comes)
    ("I/PRP wo/MD n't/RB go/VB ./.", "negation", "I wo go .", "I will go ."),
    ("I/PRP am/VBP happy/JJ ./.", "singular_plural_verb", "I ams happy .", "I are happy ."),
    ("What/WP causes/VBZ rain/NN ?/.", "negation", "What does not caus rain ?", "What does not cause rain ?"),
    ("What/WP causes/VBZ rain/NN ?/.", "singular_plural_verb", "What caus rain ?", "What cause rain ?"),
    ("It/PRP uses/VBZ the/DT machine/NN ./.", "negation", "It does not us the machine .",
     "It does not use the machine ."),
    ("Is/VBZ this/DT the/DT largest/JJS city/NN ?/.", "negation", "does not I this the largest city ?",
     "Is not this the largest city ?"),
    ("Is/VBZ this/DT the/DT largest/JJS city/NN ?/.", "singular_plural_verb", "I this the largest city ?",
     "Are this the largest city ?"),
    ("Who/WP went/VBD first/RB ?/.", "verb_tense", "Who first ?", None),  # no subject: the verb stays
    ("You/PRP was/VBD first/RB ?/.", "verb_tense", "You am first ?", "You are first ?"),
    ("He/PRP does/VBZ not/RB play/VB tennis/NN ./.", "negation", "He plaies tennis .", "He plays tennis ."),
    ("Where/WRB is/VBZ", "negation", "IndexError", "Where is not"),
]

RULES = {"negation": negation, "singular_plural_verb": singular_plural_verb, "verb_tense": verb_tense}

def apply_rule(kind: str, tagged: str) -> tuple[str | None, int]:
    pairs = [p.rsplit("/", 1) for p in tagged.split()]
    toks, tags = [a for a, _ in pairs], [b for _, b in pairs]
    out, made = RULES[kind](toks, tags)
    new = " ".join(x for x in (out.get(i, t) for i, t in enumerate(toks)) if x)
    return (new if made else None), made


@pytest.mark.parametrize("kind", ("deletion", "repetition"))
def test_word_deletion_and_repetition_are_distributed_as_the_scripts(kind):
    shift = WordPerturbation(kind=kind, style="paper", fraction=1.0)
    for text in SENTENCES[:3]:
        toks = tokens_of(text)
        for seed in range(40):  # draw for draw
            rnd = random.Random(seed)
            j = pick_token(toks, 1, rnd.randint)
            ours = toks[:j] + toks[j + 1:] if kind == "deletion" else toks[:j + 1] + toks[j:]
            assert ours == word_script(kind, toks, random.Random(seed))
        same_distribution([shifted_tokens(shift, text, seed) for seed in SEEDS],
                          [tuple(word_script(kind, toks, random.Random(seed))) for seed in SEEDS])


def test_word_order_blocks_are_distributed_as_the_script():
    shift = WordPerturbation(kind="word_order", style="paper", fraction=1.0)
    text = "What is the most common eye color ?"
    toks = tokens_of(text)
    for seed in range(40):
        units = toks[:-1]
        order = derange_block(len(units), random.Random(seed).randint)
        assert [units[i] for i in order] + ["?"] == order_script(toks, random.Random(seed))
    ours = [shifted_tokens(shift, text, seed) for seed in SEEDS]
    ref = [tuple(order_script(toks, random.Random(seed))) for seed in SEEDS]

    def block(out):  # the first and last moved positions
        moved = [k for k, (a, b) in enumerate(zip(toks, out)) if a != b]
        return (moved[0], moved[-1]) if moved else None

    same_distribution([block(o) for o in ours], [block(o) for o in ref])
    same_distribution(ours, ref)
    assert all(o[-1] == "?" for o in ours)  # final punctuation stays at the end
    assert "What is the common most color eye ?" in {" ".join(o) for o in ours}  # the paper's example
    sizes = Counter(len({k for k, (a, b) in enumerate(zip(toks, o)) if a != b}) for o in ours)
    assert set(sizes) <= set(range(2, len(toks) - 1)) and len(sizes) >= 4  # blocks of 2..n-1 words


def test_word_order_moves_texts_over_boxes_and_keeps_an_attached_final_mark_last():
    doc = form("How many hearts does an octopus have?")
    out = WordPerturbation(kind="word_order", style="paper", fraction=1.0)(doc, 3)
    assert [w.box for w in out.words] == [w.box for w in doc.words]
    assert out.words[-1].text.endswith("?") and sorted(w.text.rstrip("?") for w in out.words) == sorted(
        w.text.rstrip("?") for w in doc.words)


def test_synonym_retraces_the_script_and_joins_multiword_lemmas_with_spaces(wordnet, tagger):
    for text in ("What is the diameter of a golf ball ?", "Two dogs ran quickly .",
                 "What precious stone is a form of pure carbon ?"):
        toks = tokens_of(text)
        tags = tagger.pos_tags(toks)
        for seed in range(40):
            ours = replace_synonyms(toks, tags, 3, random.Random(seed).randint, wordnet)
            new = [ours.get(i, t) for i, t in enumerate(toks)]
            ref = synonym_script(list(zip(toks, tags)), wordnet, random.Random(seed))
            assert new == [t.replace("_", " ") for t in ref], (text, seed)
    toks = tokens_of("What is the diameter of a golf ball ?")
    outs = {tuple(sorted(replace_synonyms(toks, tagger.pos_tags(toks), 3, random.Random(s).randint,
                                          wordnet).items())) for s in range(200)}
    assert {o[0] for o in outs} == {(3, "diam")} and {o[1] for o in outs} == {(6, "golf game")}
    assert {o[2][1] for o in outs} <= {"musket ball", "globe", "orb", "testis", "testicle", "orchis", "ballock",
                                       "bollock", "nut", "egg", "Ball", "Lucille Ball", "clod", "glob", "lump", "clump",
                                       "chunk", "formal"}
    stone = tokens_of("What precious stone is a form of pure carbon ?")
    assert sorted(replace_synonyms(stone, tagger.pos_tags(stone), 3, random.Random(0).randint, wordnet)) == [1, 2, 5]


def test_synonym_shift_distribution_and_word_boxes(wordnet, tagger):
    text = "What is the diameter of a golf ball?"
    shift = WordPerturbation(kind="synonym", style="paper", per_sample=3, fraction=1.0)
    toks = tokens_of(text)
    tags = tagger.pos_tags(toks)
    ours = [shifted_tokens(shift, text, seed) for seed in range(120)]
    ref = [tuple(tokens_of(" ".join(synonym_script(list(zip(toks, tags)), wordnet, random.Random(seed))).replace(
        "_", " "))) for seed in range(120)]
    same_distribution(ours, ref)
    doc = form(text)
    out = shift(doc, 0)
    golf = [w for w in out.words if w.text == "game"]
    assert golf and golf[0].box[0] > doc.words[6].box[2] - 1  # "golf game": the second word beside the first
    index, tags_ = iob_tags(out)
    assert tags_ == ["B-QUESTION"] + ["I-QUESTION"] * (len(out.words) - 1)


@pytest.mark.parametrize("row", VERB_TABLE, ids=[r[0].split("/")[0] + str(k) for k, r in enumerate(VERB_TABLE)])
def test_verb_kinds_write_what_the_scripts_write(row):
    tagged, *expected = row
    for kind, want in zip(RULES, expected):
        assert apply_rule(kind, tagged)[0] == want, kind


@pytest.mark.parametrize("row", VERB_FIXES, ids=[f"{r[1]}-{k}" for k, r in enumerate(VERB_FIXES)])
def test_verb_kinds_fix_the_scripts_bugs(row):
    tagged, kind, script, fixed = row
    got = apply_rule(kind, tagged)[0]
    assert got == fixed and got != script  # None: the sample is left as it is


def test_every_verb_of_a_sample_changes_and_the_subject_is_the_scripts():
    out, made = apply_rule("negation", "He/PRP is/VBZ tall/JJ and/CC she/PRP runs/VBZ ./.")
    assert made == 2 and out == "He is not tall and she does not run ."
    for kind in RULES:  # the tagger may call a bracket a verb; no letter, no verb
        assert apply_rule(kind, "Call/VB (/VBZ 614/CD )/VBD") == (None, 0)
    assert subject(["The", "man"], ["DT", "NN"]) == "third"  # the script's substring test makes NN count
    assert subject(["Two", "dogs"], ["CD", "NNS"]) == "none"
    assert subject(["They", "went"], ["PRP", "VBD"]) == "plural"


def test_verb_shift_on_a_document_adds_words_in_the_entity_beside_their_twin(tagger):
    doc = form("The actor who plays Batman lives in Paris.")
    out = WordPerturbation(kind="negation", style="paper", fraction=1.0)(doc, 0)
    assert [w.text for w in out.words] == "The actor who does not play Batman does not live in Paris.".split()
    assert out.entities[0].word_ids == tuple(range(len(out.words)))
    does = out.words[3]
    assert does.box == doc.words[3].box and out.words[4].box[0] > does.box[2]  # 'not' beside 'does'
    counts = out.provenance[-1].counts
    assert counts["perturbations"] == 2 and counts["added"] == 4
    doc = form("He doesn't like green eggs.")
    out = WordPerturbation(kind="negation", style="paper", fraction=1.0)(doc, 0)
    assert [w.text for w in out.words] == ["He", "likes", "green", "eggs."]
    out = WordPerturbation(kind="verb_tense", style="paper", fraction=1.0)(form("It's raining."), 0)
    assert [w.text for w in out.words] == ["It", "was", "raining."]


def test_dogood_synonyms_keep_the_tagged_part_of_speech(tagger, wordnet):
    doc = form("Test results were sent to New York.")
    shift = WordPerturbation(kind="synonym", per_sample=4, fraction=1.0)
    seen = Counter()
    for seed in range(40):
        out = shift(doc, seed)
        for a, b in zip(doc.words, out.words):
            if a.text != b.text:
                seen[(a.text, b.text)] += 1
    assert seen and not any(a in ("New", "York.") for a, _ in seen)  # proper nouns stay
    results = {b for a, b in seen if a == "results"}
    assert results and results <= {"consequences", "effects", "outcomes", "events", "issues", "upshots"}, results
    from dogood.language.lexicons import first_sense_synonyms, tagged_synonyms

    assert "ensues" in first_sense_synonyms("results") and "ensues" not in tagged_synonyms("results", "NNS")
    assert tagged_synonyms("york", "NNP") == () and tagged_synonyms("large", "JJ") and tagged_synonyms("the", "DT") == ()


def test_dogood_synonyms_on_funsd_come_from_the_tagged_sense(funsd_test, tagger, wordnet):
    from dogood.language.selection import text_samples
    from dogood.language.words import split_word
    from dogood.shifts.text.word_perturbation import core_tags

    shift = WordPerturbation(kind="synonym", fraction=1.0)
    replaced = other = 0
    for doc_id in funsd_test.ids()[:10]:
        doc = funsd_test.load(doc_id)
        out = shift(doc, 0)
        for sample in text_samples(doc):
            tags = core_tags(doc, sample)
            for i in sample:
                if doc.words[i].text == out.words[i].text:
                    continue
                replaced += 1
                tag = tags[i]
                assert tag not in ("NNP", "NNPS")
                pos = {"N": "n", "V": "v", "J": "a", "R": "r"}[tag[0]]
                old, new = (split_word(w.text)[1].lower() for w in (doc.words[i], out.words[i]))
                bases = {new, wordnet.morphy(new, pos) or new}
                other += not any(bases & {n.lower() for n in s.lemma_names()} for s in wordnet.synsets(old, pos))
    assert replaced > 50 and other <= 0.02 * replaced, (replaced, other)
