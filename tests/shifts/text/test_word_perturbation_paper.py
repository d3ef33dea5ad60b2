"""``style: paper``: Moradi & Samwald's reference scripts' selection and operators, against a transcription of them.

Three kinds of checks per kind: draw for draw (dogood's operator fed Python's ``random.Random(seed).randint``
retraces the transcription in tests/moradi_reference.py, seeds 0-39, and the scripts' own outputs on their
first data row with ``seed(1)``); the distribution of edits through the shift on a document (numpy draws,
300 seeds) against the transcription's (Python draws, 300 seeds), by a chi-square test per feature; and the
fixed sentences of the reading notes (outputs the scripts give, and where they hang, crash or garble, what
style paper does instead).
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from moradi_reference import order_script, synonym_script, word_script
from paper_style_checks import (
    RULES,
    SEEDS,
    SENTENCES,
    VERB_FIXES,
    VERB_TABLE,
    apply_rule,
    form,
    same_distribution,
    shifted_tokens,
    tokens_of,
)

from dogood.core.schema import iob_tags
from dogood.language.moradi_ops import derange_block, pick_token, replace_synonyms
from dogood.language.moradi_verbs import subject
from dogood.shifts.text.word_perturbation import WordPerturbation


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
