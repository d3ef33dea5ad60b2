"""`dogood describe`: what a shift is, read from its declarations (parameters, boxes, counts, papers)."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

from dogood.cli import main
from dogood.core.papers import CITATIONS
from dogood.shifts import SHIFTS, Shift
from dogood.shifts.describe import describe_shift, shift_table_markdown, short_name


def test_describe_char_deletion_prints_every_declared_fact(capsys):
    assert main(["describe", "char_deletion"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "char_deletion (text shift)"
    assert lines[1] == 'Delete one character of a fraction of words (Do-GOOD 3.2, Word Swap 4; Table 4 "Character deletion").'
    header = next(line for line in lines if line.split()[:2] == ["name", "type"])
    assert header.split() == ["name", "type", "default", "range", "description", "old", "names"]
    for name in ("fraction", "labels", "render", "skip_first_char", "skip_last_char"):
        assert any(line.split()[:1] == [name] for line in lines), name
    fraction = next(line for line in lines if line.split()[:1] == ["fraction"])
    assert "a number" in fraction and "0.1" in fraction and "in [0, 1]" in fraction
    assert "share of the eligible words changed (paper: 0.1)" in fraction
    skip = next(line for line in lines if line.split()[:1] == ["skip_first_char"])
    assert "true or false" in skip and "false" in skip and "never delete a word's first character" in skip
    for level, what in Shift.box_levels.items():
        assert f"  {level}: {what}" in out
    assert "  eligible: words (or entities) the shift may act on" in out
    assert "  unchangeable: eligible items for which the shift found no change to make" in out
    assert CITATIONS["do-good"].markdown() + " Section 3.2, Word Swap 4; Table 4." in out
    assert CITATIONS["textattack"].markdown() in out
    assert "John X. Morris" in out and "2005.05909" in out


def test_describe_shows_inspired_by_with_the_difference(monkeypatch):
    from dogood.core.papers import Cites

    cls = SHIFTS["char_deletion"]
    monkeypatch.setattr(cls, "papers", cls.papers + (Cites("moradi", "4.1", inspired_by="one deletion per word."),))
    assert "    Inspired by Moradi and Samwald 2021: one deletion per word." in describe_shift("char_deletion")


def test_describe_lists_every_shift_with_family_and_summary(capsys):
    assert main(["describe"]) == 0
    rows = {line.split()[0]: line.split(None, 2)[1:] for line in capsys.readouterr().out.splitlines()}
    shipped = {name: cls for name, cls in SHIFTS.items() if cls.__module__.startswith("dogood.shifts.")}
    assert set(rows) == set(shipped) and "char_deletion" in rows
    for name, cls in shipped.items():
        family, text = rows[name]
        assert family == cls.family and text == " ".join(inspect.cleandoc(cls.__doc__ or "").split("\n\n")[0].split())


def test_unknown_shift_is_a_usage_error_without_traceback(tmp_path):
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    done = subprocess.run([sys.executable, "-m", "dogood", "describe", "nope"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert done.stderr.startswith("dogood: error: unknown shift 'nope'; known shifts: bert_attack, ")
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_every_shipped_shift_declares_each_parameter_with_a_description():
    shipped = [cls for cls in SHIFTS.values() if cls.__module__.startswith("dogood.shifts.")]
    modules = [f for family in ("image", "text", "layout")
               for f in (Path(__file__).resolve().parents[2] / "dogood" / "shifts" / family).glob("[!_]*.py")]
    assert len(shipped) == len(modules) >= 27  # one shift per module, every module registered
    for cls in shipped:
        assert cls.__init__ is Shift.__init__, cls.name
        rows = cls.describe()
        assert [r["name"] for r in rows] == list(cls.defaults()) == list(cls.Params.model_fields), cls.name
        assert all(r["description"] and r["type"] for r in rows), cls.name


def test_defaults_are_shown_as_a_recipe_writes_them():
    rows = {r["name"]: r for r in SHIFTS["char_deletion"].describe()}
    assert rows["labels"]["default"] == "null" and rows["render"]["default"] == "false"
    assert rows["fraction"]["default"] == "0.1"


def test_short_names():
    assert short_name(CITATIONS["do-good"]) == "Do-GOOD (He et al. 2023)"
    assert short_name(CITATIONS["moradi"]) == "Moradi and Samwald 2021"
    assert short_name(CITATIONS["form-attacks"]) == "Xue et al. 2021"


def test_shifts_registered_outside_dogood_are_not_listed():
    from dogood.shifts.describe import shift_list

    class Probe(Shift):
        """A shift a test registers."""

        name = "probe_not_shipped"
        family = "text"

    try:
        assert "probe_not_shipped" not in shift_table_markdown() and "probe_not_shipped" not in shift_list()
    finally:
        del SHIFTS["probe_not_shipped"]


def test_markdown_flag_prints_the_readme_table(capsys):
    assert main(["describe", "--markdown"]) == 0
    assert capsys.readouterr().out == shift_table_markdown()
    row = next(line for line in shift_table_markdown().splitlines() if line.startswith("| `char_deletion` |"))
    assert "`fraction=0.1`" in row and "`skip_last_char=false`" in row
    assert "Do-GOOD (He et al. 2023) 3.2, Word Swap 4; Table 4" in row and "TextAttack (Morris et al. 2020)" in row


def test_describe_names_the_cue_tests_a_build_runs():
    from dogood.shifts.describe import describe_shift

    text = describe_shift("natural_background")
    assert "Cues (every build tests its configs for them" in text
    assert "background: background near text vs far from text" in text
    assert "FUNSD test" in text and "level 1 0." in text  # the reference build's figures
    assert "word_style (with render: true): redrawn vs untouched words" in describe_shift("char_deletion")
    assert "Cues (" not in describe_shift("distort")
