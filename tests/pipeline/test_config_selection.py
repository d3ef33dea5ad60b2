"""Config selection on the command line: globs, comma lists, --exclude-config; `dogood list RECIPE`; python -m dogood."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from dogood.cli import main
from dogood.core.errors import RecipeError
from dogood.pipeline.recipe import load_recipe


def test_globs_comma_lists_and_exclusions_select_configs_in_recipe_order():
    t = load_recipe("funsd-t")
    ms_char = [c for c in t.configs if c.startswith("ms_char_")]
    assert len(ms_char) == 7
    assert t.select_configs(["ms_char_*"]) == ms_char
    assert t.select_configs(["char_deletion,ms_char_swap", "bg_typo"]) == ["char_deletion", "ms_char_swap", "bg_typo"]
    every = t.select_configs(None, ["bert_attack"])
    assert every == [c for c in t.configs if c != "bert_attack"] and len(every) == len(t.configs) - 1
    assert t.select_configs(["ms_*"], ["ms_word_*", "ms_paper_*", "ms_char_swap"]) == [
        c for c in ms_char if c != "ms_char_swap"]


@pytest.mark.parametrize("include, exclude, message", [
    (["ms_nothing_*"], None, "has no config matching 'ms_nothing_\\*'"),
    (None, ["bert"], "has no config matching 'bert'"),
    (["bg_typo"], ["bg_*"], "leaves no config to build"),
])
def test_a_pattern_that_matches_nothing_is_an_error_naming_it(include, exclude, message):
    with pytest.raises(RecipeError, match=message):
        load_recipe("funsd-t").select_configs(include, exclude)


def test_build_takes_globs_and_exclusions(funsd_dir, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["build", "funsd-l", "--source", str(funsd_dir), "--out", str(out), "--limit", "1", "--quiet",
                 "--config", "merge_x*", "--exclude-config", "merge_x2*,merge_x10_y0"])
    assert code == 0
    assert sorted(p.name for p in (out / "data").iterdir()) == ["merge_x0_y0", "merge_x0_y10", "merge_x0_y5"]


def test_build_refuses_an_unknown_pattern_without_a_traceback(funsd_dir, tmp_path, capsys):
    code = main(["build", "funsd-l", "--source", str(funsd_dir), "--out", str(tmp_path / "o"), "--quiet",
                 "--config", "marge*"])
    err = capsys.readouterr().err
    assert code != 0 and "dogood: error:" in err and "'marge*'" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_list_gives_one_short_line_per_recipe_and_a_recipe_its_chains(capsys):
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    count = len(load_recipe("funsd-l").configs)
    assert any(line.startswith("funsd-l v") and f"{count} config(s)" in line for line in lines)
    assert all(len(line) < 200 for line in lines)
    assert main(["list", "funsd-l"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^  merge_x20_y10 +merge\(lambda_x=20, lambda_y=10, level=entity\)$", out, re.M), out
    assert "move(scorer=baseline" in out


def test_python_m_dogood_is_the_dogood_command():
    done = subprocess.run([sys.executable, "-m", "dogood", "list", "funsd"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("funsd v") and "original" in done.stdout


def test_set_overrides_a_parameter_of_matching_configs_and_the_card_lists_it(funsd_dir, tmp_path):
    import json

    from datasets import load_dataset

    out = tmp_path / "out"
    code = main(["build", "funsd-l", "--source", str(funsd_dir), "--out", str(out), "--limit", "1", "--quiet",
                 "--config", "merge,merge_x0_y0", "--set", "merge.lambda_x=30", "--set", "merge*.until_stable=false"])
    assert code == 0
    steps = {c: json.loads(load_dataset(str(out), c, split="test")[0]["dogood"]["provenance"][0]["params"])
             for c in ("merge", "merge_x0_y0")}
    assert steps["merge"]["lambda_x"] == 30 and steps["merge"]["until_stable"] is False
    assert steps["merge_x0_y0"]["lambda_x"] == 0 and steps["merge_x0_y0"]["until_stable"] is False
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "Parameters overridden for this build (`--set`)" in card
    assert "- `merge.lambda_x=30`" in card and "- `merge*.until_stable=false`" in card
    assert json.loads((out / "dogood_build.json").read_text())["overrides"] == ["merge.lambda_x=30",
                                                                               "merge*.until_stable=false"]


@pytest.mark.parametrize("item, message", [
    ("merge.lambda_z=3", "no shift of config\\(s\\) merge takes a parameter 'lambda_z'"),
    ("marge.lambda_x=3", "has no config matching 'marge'"),
    ("merge=3", "expected CONFIG.PARAM=VALUE"),
    ("merge.lambda_x=ten", "parameter lambda_x must be a number, got 'ten'"),
])
def test_a_bad_override_is_an_error_naming_it(item, message, funsd_dir, tmp_path, capsys):
    code = main(["build", "funsd-l", "--source", str(funsd_dir), "--out", str(tmp_path / "o"), "--quiet",
                 "--config", "merge", "--set", item])
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err
    assert re.search(message, err), err
    assert not (tmp_path / "o").exists()
