"""The dogood command: list, build, show, preview; messages and exit codes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import datasets
import numpy as np
import pytest
from PIL import Image

from dogood.cli import main
from dogood.pipeline.recipe import load_recipe


def test_list_shows_every_recipe_on_one_line(capsys):
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    names = [line.split()[0] for line in lines]
    assert {"funsd", "funsd-l", "rvl-cdip-l"} <= set(names)
    layout = load_recipe("funsd-l")
    head = f"funsd-l v{layout.version} [funsd: test] {len(layout.configs)} config(s): FUNSD-L"
    assert any(line.startswith(head) for line in lines)


def test_build_then_load(funsd_dir, tmp_path, capsys):
    out = tmp_path / "funsd-l"
    code = main(["build", "funsd-l", "--source", str(funsd_dir), "--out", str(out), "--limit", "3", "--quiet"])
    assert code == 0
    said = capsys.readouterr().out
    layout = load_recipe("funsd-l")
    assert f"built funsd-l v{layout.version}: 3 test documents x {len(layout.configs)} config(s) (merge, " in said
    assert datasets.load_dataset(str(out), "dg_move", split="test").num_rows == 3  # the repo's strength test
    assert datasets.load_dataset(str(out), "merge", split="test").num_rows == 3
    assert datasets.load_dataset(str(out), "move", split="test").num_rows == 3
    # a second build into the same folder is refused with a clear message, exit 1
    assert main(["build", "funsd-l", "--source", str(funsd_dir), "--out", str(out), "--quiet"]) == 1
    assert "already exists; pass --overwrite" in capsys.readouterr().err


def test_seed_option_is_recorded(funsd_dir, tmp_path):
    out = tmp_path / "s"
    assert main(["build", "funsd-l", "--source", str(funsd_dir), "--out", str(out), "--limit", "1", "--seed", "7", "--config", "merge", "--quiet"]) == 0
    ds = datasets.load_dataset(str(out), "merge", split="test")
    from dogood.core.seeds import step_seed
    from dogood.pipeline.recipe import load_recipe

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
    assert main(["show", "funsd-l", "--source", str(funsd_dir), "--doc", doc_id]) == 0
    text = capsys.readouterr().out
    doc = funsd_test.load(doc_id)
    assert text.splitlines()[0] == f"document {doc_id}  ({doc.width}x{doc.height} px, {len(doc.words)} words, {len(doc.entities)} entities)"
    linked = next(e for e in doc.entities if e.links)
    assert f"links {linked.links[0][0]}->{linked.links[0][1]}" in text
    assert str(list(doc.words[1].box)) in text
    # with a config, the shifted document and its provenance
    assert main(["show", "funsd-l", "--source", str(funsd_dir), "--doc", doc_id, "--config", "merge"]) == 0
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
    res = subprocess.run([sys.executable, "-m", "dogood", "--version"], capture_output=True, text=True, env=env)
    assert res.returncode == 0 and res.stdout.startswith("dogood ")
    res = subprocess.run([sys.executable, "-m", "dogood", "build"], capture_output=True, text=True, env=env)
    assert res.returncode == 2 and "recipe" in res.stderr


def test_list_needs_no_data(tmp_path):
    """`dogood list` reads recipes only: it runs with no NLTK data and no dogood data folder."""
    from pathlib import Path

    from dogood.pipeline.recipe import list_recipes

    repo = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k not in ("NLTK_DATA", "DOGOOD_DATA_DIR")}
    env["PYTHONPATH"] = str(repo)
    env["HOME"] = str(tmp_path)  # no ~/nltk_data either
    done = subprocess.run([sys.executable, "-m", "dogood", "list"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    printed = {line.split()[0] for line in done.stdout.splitlines() if line.strip()}
    assert printed >= {recipe.name for recipe in list_recipes()}


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again on leaving: a connection to it is refused


@pytest.fixture
def no_hub(request, tmp_path, monkeypatch):
    """An empty Hub cache and a Hub that cannot be reached: HF_HUB_OFFLINE=1, or an endpoint on a closed port."""
    from huggingface_hub import constants

    from dogood.core import hub as loading

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    monkeypatch.setattr(loading, "_PROBED", {})
    if request.param == "offline":
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        return "HF_HUB_OFFLINE is set"
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    return f"{endpoint}: ConnectionError"


@pytest.mark.parametrize("no_hub", ["offline", "closed-port"], indirect=True)
def test_an_unreachable_hub_model_fails_at_once_naming_the_config_and_the_way_out(no_hub, funsd_dir, tmp_path, capsys):
    import time

    start = time.perf_counter()
    code = main(["build", "funsd-t", "--source", str(funsd_dir), "--out", str(tmp_path / "o"), "--limit", "1",
                 "--quiet", "--config", "bert_attack,char_deletion"])
    seconds = time.perf_counter() - start
    err = capsys.readouterr().err
    assert code == 1 and seconds < 15, seconds  # from_pretrained's retries took 35-41 s
    assert err.startswith("dogood: error: recipe funsd-t, config 'bert_attack', shift 'bert_attack': the model "
                          "'bert-base-uncased' is not on this machine and the Hugging Face Hub cannot be reached ("
                          + no_hub)
    assert err.rstrip().endswith("); pass a local path with --set bert_attack.model=/path, or leave the config out "
                                 "with --exclude-config bert_attack")
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "o").exists()

    start = time.perf_counter()
    code = main(["eval", "--model", "someone/layoutlmv3-funsd", "--id", "funsd", "--ood", "funsd", "--limit", "1",
                 "--out", str(tmp_path / "eval"), "--quiet", "--bootstrap", "0"])
    seconds = time.perf_counter() - start
    err = capsys.readouterr().err
    assert code == 1 and seconds < 15, seconds
    assert err.startswith("dogood: error: --model: the model 'someone/layoutlmv3-funsd' is not on this machine and "
                          "the Hugging Face Hub cannot be reached (" + no_hub)
    assert err.rstrip().endswith("; pass a local model folder to --model") and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("no_hub", ["offline", "closed-port"], indirect=True)
def test_a_cached_hub_model_is_read_from_the_cache_when_the_hub_is_unreachable(no_hub):
    from huggingface_hub import constants

    from dogood.core.hub import HubUnreachable, check_hub_model, hub_options

    with pytest.raises(HubUnreachable, match="'bert-base-uncased' is not on this machine"):
        check_hub_model("bert-base-uncased")
    repo = Path(constants.HF_HUB_CACHE) / "models--bert-base-uncased"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("abc123")
    (repo / "snapshots" / "abc123").mkdir(parents=True)
    (repo / "snapshots" / "abc123" / "config.json").write_text("{}")
    check_hub_model("bert-base-uncased")  # cached: no error
    assert hub_options("bert-base-uncased") == {"local_files_only": True}  # and no retries: the cache at once


@pytest.mark.parametrize("command", ["show", "preview"])
def test_id_of_show_and_preview_is_now_doc(command, capsys):
    with pytest.raises(SystemExit) as stop:
        main([command, "funsd-l", "--id", "82092117"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "--id is now --doc: pass the document id as --doc 82092117" in err


def _diff_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()[1:-1]]


def test_show_diff_lists_exactly_the_words_a_text_shift_changed(funsd_dir, funsd_test, capsys):
    from dogood.pipeline.recipe import load_recipe
    from dogood.pipeline.worker import apply_chain

    recipe = load_recipe("funsd-t")
    doc = funsd_test.load("82092117")
    shifted = apply_chain(doc, recipe.chain("char_deletion"), recipe.seed)
    assert len(shifted.words) == len(doc.words)
    truth = [f"word {i}: {a.text!r} → {b.text!r}" for i, (a, b) in enumerate(zip(doc.words, shifted.words))
             if a.text != b.text]
    assert len(truth) >= 10 and all(tuple(a.box) == tuple(b.box) for a, b in zip(doc.words, shifted.words))
    assert main(["show", "funsd-t", "--source", str(funsd_dir), "--doc", "82092117", "--config", "char_deletion",
                 "--diff"]) == 0
    out = capsys.readouterr().out
    assert _diff_lines(out) == truth
    assert out.splitlines()[-1] == (f"{len(truth)} replaced, 0 inserted, 0 deleted, 0 moved of {len(doc.words)} "
                                    "words; pixels changed in 0.0% of the page")

    # a deletion: the deleted words, by their index in the original, and nothing else
    shifted = apply_chain(doc, recipe.chain("ms_word_deletion"), recipe.seed)
    kept = [w.text for w in shifted.words]
    assert main(["show", "funsd-t", "--source", str(funsd_dir), "--doc", "82092117", "--config",
                 "ms_word_deletion", "--diff"]) == 0
    lines = _diff_lines(capsys.readouterr().out)
    gone = [int(line.split(":")[0].split()[1]) for line in lines]
    assert all(line.endswith("→ (deleted)") for line in lines) and len(gone) == len(doc.words) - len(kept)
    assert [w.text for i, w in enumerate(doc.words) if i not in set(gone)] == kept


def test_show_diff_of_a_built_folder_compares_its_row_with_the_source_document(funsd_dir, funsd_test, tmp_path,
                                                                                capsys):
    out = tmp_path / "b"
    assert main(["build", "funsd-l", "--source", str(funsd_dir), "--out", str(out), "--limit", "1", "--config",
                 "merge", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["show", str(out), "--doc", "82092117", "--source", str(funsd_dir), "--diff"]) == 0
    text = capsys.readouterr().out
    doc = funsd_test.load("82092117")
    row = datasets.load_dataset(str(out), "merge", split="test")[0]
    moved = sum(1 for w, box in zip(doc.words, row["dogood"]["word_boxes"]) if list(w.box) != list(box))
    assert text.startswith("document 82092117: merge ")
    assert " 0 replaced, 0 inserted, 0 deleted, " in " " + text.splitlines()[-1]
    n_moved = int(text.splitlines()[-1].split(" deleted, ")[1].split(" moved")[0])
    assert n_moved == moved > 100
    first = doc.words[4]
    assert f"word 4: {first.text!r}  box {list(first.box)} → [" in text


def test_preview_of_a_built_folder_puts_its_row_beside_the_source_document(funsd_dir, funsd_test, tmp_path, capsys):
    from dogood.measures.preview import render_preview
    from dogood.sources.hf_dataset import HFDatasetSource

    out = tmp_path / "b"
    assert main(["build", "funsd-t", "--source", str(funsd_dir), "--out", str(out), "--limit", "1", "--config",
                 "char_deletion", "--quiet"]) == 0
    png = tmp_path / "p.png"
    assert main(["preview", str(out), "--doc", "82092117", "--source", str(funsd_dir), "--out", str(png)]) == 0
    assert capsys.readouterr().out.strip().endswith(f"wrote {png}")
    row = HFDatasetSource(name=str(out), config="char_deletion", split="test").load("82092117")
    expected = render_preview(funsd_test.load("82092117"), row)
    assert np.array_equal(np.asarray(Image.open(png).convert("RGB")), np.asarray(expected))
    assert row.words != funsd_test.load("82092117").words  # a text shift: the two sides differ
