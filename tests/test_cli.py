"""The dogood command: list, build, show, preview; messages and exit codes."""

from __future__ import annotations

import os
import subprocess
import sys

import datasets
import numpy as np
import pytest
from PIL import Image

from dogood.cli import main


def test_list_shows_every_recipe_on_one_line(capsys):
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    names = [line.split()[0] for line in lines]
    assert {"funsd", "funsd-l", "rvl-cdip-l"} <= set(names)
    assert any(line.startswith("funsd-l v2.0.0 [funsd: test] 8 config(s): FUNSD-L") for line in lines)


def test_build_then_load(funsd_dir, tmp_path, capsys):
    out = tmp_path / "funsd-l"
    code = main(["build", "funsd-l", "--source", str(funsd_dir), "--out", str(out), "--limit", "3", "--quiet"])
    assert code == 0
    said = capsys.readouterr().out
    assert "built funsd-l v2.0.0: 3 test documents x 8 config(s) (merge, " in said  # move too: the baseline scores
    assert datasets.load_dataset(str(out), "merge", split="test").num_rows == 3
    assert datasets.load_dataset(str(out), "move", split="test").num_rows == 3
    # a second build into the same folder is refused with a clear message, exit 1
    assert main(["build", "funsd-l", "--source", str(funsd_dir), "--out", str(out), "--quiet"]) == 1
    assert "already exists; pass --overwrite" in capsys.readouterr().err


def test_seed_option_is_recorded(funsd_dir, tmp_path):
    out = tmp_path / "s"
    assert main(["build", "funsd-l", "--source", str(funsd_dir), "--out", str(out), "--limit", "1", "--seed", "7", "--config", "merge", "--quiet"]) == 0
    ds = datasets.load_dataset(str(out), "merge", split="test")
    from dogood.recipe import load_recipe
    from dogood.seeds import step_seed

    key = load_recipe("funsd-l").chain("merge")[0].step_key()
    assert ds[0]["dogood"]["provenance"][0]["seed"] == step_seed(7, ds[0]["id"], 0, key)


def test_bad_input_gives_exit_1_and_names_the_problem(tmp_path, capsys):
    assert main(["build", "no-such-recipe"]) == 1
    assert "no recipe file or name 'no-such-recipe'" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nversion: 1.0.0\nsource: {kind: funsd}\nconfigs:\n  a: [{shift: blur}]\n")
    assert main(["build", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "unknown shift 'blur'" in err and str(bad) in err
    assert main(["build", "funsd-l", "--source", str(tmp_path)]) == 1
    assert "is not a FUNSD folder" in capsys.readouterr().err


def test_show_prints_words_boxes_labels_and_links(funsd_dir, funsd_test, capsys):
    doc_id = funsd_test.ids()[0]
    assert main(["show", "funsd-l", "--source", str(funsd_dir), "--id", doc_id]) == 0
    text = capsys.readouterr().out
    doc = funsd_test.load(doc_id)
    assert text.splitlines()[0] == f"document {doc_id}  ({doc.width}x{doc.height} px, {len(doc.words)} words, {len(doc.entities)} entities)"
    linked = next(e for e in doc.entities if e.links)
    assert f"links {linked.links[0][0]}->{linked.links[0][1]}" in text
    assert str(list(doc.words[1].box)) in text
    # with a config, the shifted document and its provenance
    assert main(["show", "funsd-l", "--source", str(funsd_dir), "--id", doc_id, "--config", "merge"]) == 0
    assert "shift: merge" in capsys.readouterr().out


def test_show_reads_a_built_folder(funsd_dir, tmp_path, capsys):
    out = tmp_path / "b"
    main(["build", "funsd-l", "--source", str(funsd_dir), "--out", str(out), "--limit", "2", "--config", "merge", "--quiet"])
    capsys.readouterr()
    assert main(["show", str(out), "--config", "merge", "--index", "1"]) == 0
    text = capsys.readouterr().out
    assert "shift: merge" in text and text.startswith("document ")


def test_preview_writes_both_pages(funsd_dir, funsd_test, tmp_path, capsys):
    png = tmp_path / "p.png"
    doc = funsd_test.load(funsd_test.ids()[0])
    assert main(["preview", "funsd-l", "--source", str(funsd_dir), "--out", str(png)]) == 0
    im = Image.open(png)
    # two pages of the same height side by side: wider than tall, about twice the page's aspect
    assert im.width > 1.8 * im.height * doc.width / doc.height
    arr = np.asarray(im.convert("RGB"))
    assert (arr != 255).any()


def test_console_script_runs():
    env = dict(os.environ)
    res = subprocess.run([sys.executable, "-m", "dogood.cli", "--version"], capture_output=True, text=True, env=env)
    assert res.returncode == 0 and res.stdout.startswith("dogood ")
    res = subprocess.run([sys.executable, "-m", "dogood.cli", "build"], capture_output=True, text=True, env=env)
    assert res.returncode == 2 and "recipe" in res.stderr


def test_list_needs_no_data(tmp_path):
    """`dogood list` reads recipes only: it runs with no NLTK data and no dogood data folder."""
    from pathlib import Path

    from dogood.recipe import list_recipes

    repo = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if k not in ("NLTK_DATA", "DOGOOD_DATA_DIR")}
    env["PYTHONPATH"] = str(repo)
    env["HOME"] = str(tmp_path)  # no ~/nltk_data either
    done = subprocess.run([sys.executable, "-m", "dogood.cli", "list"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    printed = {line.split()[0] for line in done.stdout.splitlines() if line.strip()}
    assert printed >= {recipe.name for recipe in list_recipes()}
