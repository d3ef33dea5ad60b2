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

import pytest
from paper_style_checks import FIRST_ROW, form, ours_char, shifted_tokens, tokens_of

from dogood.language.moradi_ops import derange_block, pick_token
from dogood.shifts import make_shift
from dogood.shifts.text.char_perturbation import CharPerturbation
from dogood.shifts.text.word_perturbation import WordPerturbation


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
