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


def test_the_scripts_outputs_on_their_first_row_with_seed_1():
    """The scripts seed Python's generator with 1 once; on the first row they print these (the reading notes)."""
    toks = tokens_of(FIRST_ROW)
    expect = {"insertion": "How many hiearts does an octopus have ?",
              "deletion": "How many harts does an octopus have ?",
              "repetition": "How many heearts does an octopus have ?",
              "swap": "How many heatrs does an octopus have ?",
              "replacement": "How many hrarts does an octopus have ?",
              "letter_case": "How many Hearts does an octopus have ?"}
    for kind, text in expect.items():
        assert " ".join(ours_char(kind, toks, random.Random(1))) == text
    rnd = random.Random(1)
    j = pick_token(toks, 1, rnd.randint)
    assert " ".join(toks[:j] + toks[j + 1:]) == "How many does an octopus have ?"
    units = toks[:-1]
    order = derange_block(len(units), random.Random(1).randint)
    assert " ".join(units[i] for i in order) + " ?" == "many does How an octopus hearts have ?"


def test_fixed_sentences_of_the_notes():
    def outcomes(kind, text, shift_cls=CharPerturbation):
        shift = shift_cls(kind=kind, style="paper", fraction=1.0)
        return {" ".join(shifted_tokens(shift, text, seed)) for seed in range(60)}

    assert outcomes("deletion", "I saw it") == {"I sw it"}
    assert outcomes("repetition", "I saw it") == {"I saaw it"}
    assert outcomes("replacement", "I saw it") == {"I ssw it"}
    assert outcomes("letter_case", "I saw it") == {"I Saw it", "I SAW it"}
    assert outcomes("swap", "I saw it") == {"I asw it", "I swa it"}
    assert {s[3] for s in outcomes("insertion", "I saw it")} <= set("abcdefghijklmnopqrstuvwxyz")
    assert outcomes("deletion", "I saw it", WordPerturbation) == {"I it", "I saw"}
    assert outcomes("repetition", "I saw it", WordPerturbation) == {"I saw saw it", "I saw it it"}
    assert outcomes("letter_case", "1 2 345") == {"1 2 345"}  # the scripts drop the sample: unchanged here
    assert outcomes("replacement", "1 2 345") == {"1 2 345"}
    assert all(o[:5] == "1 2 3" and o[6:] == "45" and o[5].islower() for o in outcomes("insertion", "1 2 345"))
    assert outcomes("word_order", "The cat sat.", WordPerturbation) == {"cat The sat .", "The sat cat ."}
    assert outcomes("word_order", "Hi you !", WordPerturbation) == {"Hi you !"}


def test_style_dogood_leaves_the_seed_and_provenance_of_existing_configs_unchanged():
    old = {"kind": "deletion", "per_sample": 1, "fraction": 0.1, "labels": None, "render": False, "span": 3}
    assert WordPerturbation(kind="deletion").recorded_params() == old
    assert WordPerturbation(kind="deletion").params() == {**old, "style": "dogood"}
    assert WordPerturbation(kind="deletion").step_key() == '{"params": {"fraction": 0.1, "kind": "deletion", ' \
        '"labels": null, "per_sample": 1, "render": false, "span": 3}, "shift": "word_perturbation"}'
    assert "style" not in CharPerturbation(kind="swap").recorded_params()
    assert "style" not in CharPerturbation(kind="swap")(form("I saw it"), 0).provenance[-1].params
    assert WordPerturbation(kind="deletion", style="paper").recorded_params() == {**old, "style": "paper"}
    with pytest.raises(Exception, match="style"):
        make_shift({"shift": "char_perturbation", "style": "reference"})


@pytest.mark.parametrize("shift", [CharPerturbation(kind="swap", style="paper", fraction=0.5),
                                   WordPerturbation(kind="word_order", style="paper", fraction=1.0)])
def test_paper_style_is_deterministic_per_seed(shift):
    doc = form("Send 1,000 copies of form B-12 to Mr. O'Neil today.")
    a, b = shift(doc, 7), shift(doc, 7)
    assert [w.text for w in a.words] == [w.text for w in b.words]
    assert {tuple(w.text for w in shift(doc, s).words) for s in range(20)} != {tuple(w.text for w in a.words)}


def test_card_notes_say_the_style():
    assert "Style `paper`" in CharPerturbation(kind="swap", style="paper").card_notes()[0]
    assert "every matching verb" in WordPerturbation(kind="negation", style="paper").card_notes()[0]
    assert "Style `dogood`" in WordPerturbation(kind="negation").card_notes()[0]


def test_funsd_t_has_a_paper_style_config_per_kind():
    from dogood.language.chars import CHAR_KINDS
    from dogood.pipeline.recipe import load_recipe
    from dogood.shifts.text.word_perturbation import WORD_KINDS

    recipe = load_recipe("funsd-t")
    paper = {c: chain[0] for c, chain in recipe.configs.items() if c.startswith("ms_paper_")}
    assert len(paper) == 14
    assert {(s["shift"], s["kind"]) for s in paper.values()} == (
        {("char_perturbation", k) for k in CHAR_KINDS} | {("word_perturbation", k) for k in WORD_KINDS})
    assert all(s["style"] == "paper" and s["fraction"] == 1.0 for s in paper.values())
    assert {c for c, s in paper.items() if s["per_sample"] == 3} == {"ms_paper_char_misspelling",
                                                                     "ms_paper_word_synonym"}


def test_funsd_t_builds_paper_configs_and_the_card_says_their_style(funsd_dir, tmp_path, tagger, wordnet):
    import pyarrow.parquet as pq

    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import load_recipe

    out = tmp_path / "t"
    configs = ["ms_paper_char_replacement", "ms_paper_word_negation", "ms_paper_word_order", "ms_char_swap"]
    build(load_recipe("funsd-t"), out, source_path=funsd_dir, limit=2, configs=configs, progress=False)
    card = (out / "README.md").read_text(encoding="utf-8")
    for config in configs:
        section = card.split(f"### `{config}`")[1].split("### ")[0]
        assert ("Style `paper`" in section) == ("paper" in config), config
        rows = [r for f in sorted((out / "data" / config).glob("*.parquet")) for r in pq.read_table(f).to_pylist()]
        assert len(rows) == 2


def test_a_build_without_the_tagger_stops_at_once_naming_the_config_and_the_extra(funsd_dir, tmp_path, capsys,
                                                                                  monkeypatch):
    from dogood.cli import main
    from dogood.language import pos_tagger

    monkeypatch.setattr(pos_tagger, "MODEL_PACKAGE", "no_such_tagger_package")
    pos_tagger.tagger.cache_clear()
    try:
        code = main(["build", "funsd-t", "--source", str(funsd_dir), "--out", str(tmp_path / "o"), "--limit", "1",
                     "--quiet", "--config", "ms_paper_word_negation"])
    finally:
        monkeypatch.undo()
        pos_tagger.tagger.cache_clear()
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("dogood: error: recipe funsd-t, config 'ms_paper_word_negation'")
    assert 'pip install "dogood[pos]"' in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()
