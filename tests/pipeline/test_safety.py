"""Nothing the user owns is ever lost: each attack a reviewer reproduced, and what dogood does now.

- two builds into one ``--out`` (a lock; the second stops or waits);
- ``--out`` over the source, ``--out .``, ``--overwrite`` on a folder dogood did not build;
- a crash between the two renames that replace a build;
- recipe names that are paths, in recipes and in push (dry runs too);
- push over the user's own builds, and local paths in cards;
- resuming with shards of another source folder that has the same ids;
- YAML alias bombs, duplicate keys, combination explosions;
- local files named by a dataset's image cells;
- PNGs whose chunks are fine but whose pixels are not;
- CLI values (``--limit 0``, ``--num-proc 0``, repeated configs and splits, NaN parameters,
  float and boolean ids) and one-line errors for every foreseeable failure.
"""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import re
import struct
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import datasets
import pytest
from PIL import Image
from tiny_recipe import TINY

from dogood.cli import main
from dogood.core.document import PageImage
from dogood.core.errors import DocumentError, DogoodError, RecipeError
from dogood.pipeline.build import build
from dogood.pipeline.recipe import load_recipe, parse_recipe
from dogood.share.publish import PublishEntry, PublishError, ensure_build, push

REPO = Path(__file__).resolve().parents[2]



def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def files(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` (hidden ones too), path -> bytes."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def source(copy_funsd_forms, tmp_path):
    """Two forms per FUNSD split, in the official layout, under ``tmp_path/data/funsd``."""
    return copy_funsd_forms(tmp_path / "data" / "funsd", n=2)


@pytest.fixture
def tiny(tmp_path):
    return write(tmp_path / "recipes" / "tiny.yaml", TINY)


_CACHES = iter(range(10**6))


def load(folder: Path) -> datasets.Dataset:
    """The ``plain`` config's test split of a built folder, through a cache of its own: ``datasets`` caches local
    Parquet by file names and times, so two tests' builds made in the same second could share an entry."""
    cache = Path(os.environ["HF_HOME"]) / "test-safety-caches" / str(next(_CACHES))  # the test session's
    return datasets.load_dataset(str(folder), "plain", split="test", cache_dir=str(cache))


def run_build(tiny, source, out, *extra) -> int:
    return main(["build", str(tiny), "--source", str(source), "--out", str(out), "--quiet", *extra])


def user_folder(path: Path) -> dict[str, bytes]:
    """A folder of the user's own (no dogood build), returned as its files."""
    write(path / "thesis.tex", "\\documentclass{article} % three years of work\n")
    (path / "figures").mkdir(parents=True, exist_ok=True)
    (path / "figures" / "plot.png").write_bytes(b"\x89PNG not really")
    return files(path)


# -- concurrent builds -----------------------------------------------------------------------------------
HOLDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from dogood.pipeline.safety import output_lock
    with output_lock(Path(sys.argv[1])):
        print("locked", flush=True)
        sys.stdin.readline()
    """
)


def hold_lock(out: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def release(proc: subprocess.Popen) -> None:
    proc.stdin.write("\n")
    proc.stdin.close()
    assert proc.wait() == 0


def test_a_second_build_into_the_same_out_stops_while_the_first_runs(tiny, source, tmp_path, capsys):
    out = tmp_path / "out" / "tiny"
    holder = hold_lock(out)  # another process: a build in progress
    try:
        assert run_build(tiny, source, out) == 1
        err = capsys.readouterr().err
        assert err.startswith("dogood: error: another dogood build is writing") and "--wait" in err
        assert not out.exists() and not (tmp_path / "out" / ".tiny.partial").exists()
    finally:
        release(holder)
    assert run_build(tiny, source, out) == 0  # the lock went with the other process
    assert sorted(p.name for p in out.parent.iterdir()) == ["tiny"]  # no lock file or work folder left


def test_wait_queues_behind_the_other_build(tiny, source, tmp_path):
    out = tmp_path / "out" / "tiny"
    holder = hold_lock(out)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    waiting = subprocess.Popen([sys.executable, "-m", "dogood", "build", str(tiny), "--source", str(source),
                                "--out", str(out), "--quiet", "--wait"], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    release(holder)
    stdout, stderr = waiting.communicate()
    assert waiting.returncode == 0, stderr
    assert "built tiny v1.0.0: 2 test documents" in stdout


# -- where the output goes ------------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["source", "parent", "inside", "split-folder"])
def test_out_over_the_source_is_refused_before_anything_is_written(tiny, source, where, capsys):
    out = {"source": source, "parent": source.parent, "inside": source / "new",
           "split-folder": source / "testing_data"}[where]
    before = files(source.parent.parent)
    assert run_build(tiny, source, out, "--overwrite") == 1
    assert "overlaps the source data" in capsys.readouterr().err
    assert files(source.parent.parent) == before
    assert sorted(p.name for p in source.parent.parent.rglob("*") if p.name.startswith(".")) == []


def test_out_dot_is_refused(tiny, source, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(write(tmp_path / "work" / "notes.txt", "mine").parent)
    before = files(tmp_path / "work")
    assert run_build(tiny, source, ".", "--overwrite") == 1
    assert "--out . names no folder of its own" in capsys.readouterr().err
    assert files(tmp_path / "work") == before


def test_overwrite_refuses_a_folder_no_dogood_build_made(tiny, source, tmp_path, capsys):
    out = tmp_path / "thesis"
    before = user_folder(out)
    assert run_build(tiny, source, out, "--overwrite") == 1
    err = capsys.readouterr().err
    assert "is not a dataset dogood built" in err and "refusing to replace it even with --overwrite" in err
    assert files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "recipes", "thesis"]
    # a forged dogood_build.json that dogood did not write is not enough
    write(out / "dogood_build.json", '{"hello": 1}')
    assert run_build(tiny, source, out, "--overwrite") == 1
    assert (out / "thesis.tex").is_file()


def test_overwrite_refuses_a_file(tiny, source, tmp_path, capsys):
    out = write(tmp_path / "results.csv", "a,b\n1,2\n")
    assert run_build(tiny, source, out, "--overwrite") == 1
    assert "is not a folder" in capsys.readouterr().err
    assert out.read_text() == "a,b\n1,2\n"


def test_overwrite_replaces_a_dogood_build(tiny, source, tmp_path):
    out = tmp_path / "out"
    assert run_build(tiny, source, out, "--limit", "1") == 0
    assert json.loads((out / "dogood_build.json").read_text())["written_by"] == "dogood"
    assert run_build(tiny, source, out, "--overwrite") == 0
    assert load(out).num_rows == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "out", "recipes"]


def test_a_hidden_folder_in_the_way_of_the_work_folder_is_kept(tiny, source, tmp_path, capsys):
    before = user_folder(tmp_path / ".out.partial")
    assert run_build(tiny, source, tmp_path / "out") == 1
    clean_error(capsys, "was not left by a dogood build")
    assert files(tmp_path / ".out.partial") == before and not (tmp_path / "out").exists()


def test_a_crash_between_the_renames_loses_nothing(tiny, source, tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    assert run_build(tiny, source, out, "--limit", "1") == 0
    old = files(out)
    real = os.replace

    def crash(src, dst):  # the process dies after moving the old build aside, before the new one is in place
        if Path(src).name == ".out.partial" or Path(src).name.startswith(".out.old-"):
            raise SystemExit("killed")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(SystemExit):
        build(load_recipe(tiny), out, source_path=source, overwrite=True, progress=False)
    monkeypatch.setattr(os, "replace", real)
    assert not out.exists()  # the worst moment: only the hidden .old folder holds the build
    (kept,) = [p for p in tmp_path.iterdir() if ".old-" in p.name]
    assert files(kept) == old
    # the next command puts it back first: without --overwrite it is refused, and the build is there
    assert run_build(tiny, source, out) == 1
    assert "already exists" in capsys.readouterr().err
    assert files(out) == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "out", "recipes"]


def test_an_interrupted_replacement_puts_the_old_build_back(tiny, source, tmp_path, monkeypatch):
    out = tmp_path / "out"
    assert run_build(tiny, source, out, "--limit", "1") == 0
    old = files(out)
    real = os.replace

    def fail(src, dst):
        if Path(src).name == ".out.partial":
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        build(load_recipe(tiny), out, source_path=source, overwrite=True, progress=False)
    assert files(out) == old


# -- recipe names ----------------------------------------------------------------------------------------
BAD_NAMES = ["../../escape", "/etc", "a/b", "", ".hidden", "..", "a\\b"]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_recipe_names_that_are_paths_are_refused_at_parse_time(name):
    with pytest.raises(RecipeError, match="must be letters, digits"):
        parse_recipe({"name": name, "version": "1.0.0", "source": {"kind": "funsd"}, "configs": {"a": []}})


@pytest.mark.parametrize("name", ["../../escape", "/tmp/abs", ""])
def test_push_refuses_a_path_as_recipe_name_before_touching_a_folder(tmp_path, name):
    recipe = write(tmp_path / "r.yaml", TINY.replace("name: tiny", f"name: {json.dumps(name)}"))
    manifest = write(tmp_path / "m.yaml", f"datasets:\n  - {{repo: me/x, recipe: {recipe.name}}}\n")
    before = files(tmp_path)
    with pytest.raises(PublishError, match="must be letters, digits"):
        push(manifest, build_dir=tmp_path / "out", dry_run=tmp_path / "dry", progress=False)
    assert files(tmp_path) == before and not (tmp_path / "out").exists() and not (tmp_path / "dry").exists()


def test_ensure_build_refuses_a_recipe_object_with_a_path_name(tmp_path, tiny):
    recipe = load_recipe(tiny)
    recipe.name = "../../escape"
    with pytest.raises(DogoodError, match="must be letters, digits"):
        ensure_build(PublishEntry("me/x", recipe, ["plain"]), tmp_path / "out")
    with pytest.raises(DogoodError, match="must be letters, digits"):
        build(recipe, tmp_path / "o", progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["recipes"]


# -- push over existing builds -----------------------------------------------------------------------------
def push_manifest(tmp_path, tiny, source) -> Path:
    return write(tmp_path / "m.yaml", f"datasets:\n  - {{repo: me/tiny, recipe: {tiny}, source: {source}}}\n")


def test_push_dry_run_does_not_replace_a_partial_build(tiny, source, tmp_path):
    out = tmp_path / "out"
    assert run_build(tiny, source, out / "tiny", "--limit", "1") == 0  # the user's own, smaller build
    before = files(out / "tiny")
    (result,) = push(push_manifest(tmp_path, tiny, source), build_dir=out, dry_run=tmp_path / "dry", progress=False)
    assert files(out / "tiny") == before
    assert load(result.folder).num_rows == 2  # a full build
    assert (out / ".push" / "tiny" / "dogood_build.json").is_file()


def test_push_does_not_replace_a_folder_of_the_user(tiny, source, tmp_path):
    out = tmp_path / "out"
    before = user_folder(out / "tiny")
    push(push_manifest(tmp_path, tiny, source), build_dir=out, dry_run=tmp_path / "dry", progress=False)
    assert files(out / "tiny") == before


def test_push_does_not_reuse_a_build_with_skipped_documents(tiny, source, tmp_path):
    out = tmp_path / "out"
    (source / "testing_data" / "annotations" / sorted(os.listdir(source / "testing_data" / "annotations"))[0]
     ).write_text("{", encoding="utf-8")
    assert run_build(tiny, source, out / "tiny", "--on-error", "skip") == 0
    before = files(out / "tiny")
    with pytest.raises(DogoodError, match="failed"):  # rebuilt in full, elsewhere: the broken form stops it
        push(push_manifest(tmp_path, tiny, source), build_dir=out, dry_run=tmp_path / "dry", progress=False)
    assert files(out / "tiny") == before


def test_push_reuses_a_full_build(tiny, source, tmp_path):
    out = tmp_path / "out"
    assert run_build(tiny, source, out / "tiny") == 0
    before = files(out / "tiny")
    (result,) = push(push_manifest(tmp_path, tiny, source), build_dir=out, dry_run=tmp_path / "dry", progress=False)
    assert files(out / "tiny") == before and not (out / ".push").exists()
    shard = "data/plain/test-00000-of-00002.parquet"
    assert files(result.folder)[shard] == before[shard]


def test_push_does_not_reuse_a_build_of_other_source_files(tiny, source, copy_funsd_forms, tmp_path):
    out = tmp_path / "out"
    other = copy_funsd_forms(tmp_path / "other", n=2)
    first = sorted((other / "testing_data" / "annotations").glob("*.json"))[0]
    form = json.loads(first.read_text())
    word = next(w for ent in form["form"] for w in ent["words"] if w["text"])
    word["text"] += "X"  # the user's edited copy
    first.write_text(json.dumps(form))
    assert run_build(tiny, other, out / "tiny") == 0
    before = files(out / "tiny")
    (result,) = push(push_manifest(tmp_path, tiny, source), build_dir=out, dry_run=tmp_path / "dry", progress=False)
    assert files(out / "tiny") == before and (out / ".push" / "tiny").is_dir()
    assert files(result.folder)["data/plain/test-00000-of-00002.parquet"] != before["data/plain/test-00000-of-00002.parquet"]


def test_push_does_not_reuse_a_build_with_another_box_level(tiny, source, tmp_path):
    out = tmp_path / "out"
    assert run_build(tiny, source, out / "tiny", "--box-level", "word") == 0
    before = files(out / "tiny")
    push(push_manifest(tmp_path, tiny, source), build_dir=out, dry_run=tmp_path / "dry", progress=False)
    assert files(out / "tiny") == before and (out / ".push" / "tiny").is_dir()


def test_dry_run_does_not_replace_a_folder_of_the_user(tiny, source, tmp_path):
    dry = tmp_path / "dry"
    before = user_folder(dry / "me__tiny")
    with pytest.raises(PublishError, match="not a dataset dogood staged"):
        push(push_manifest(tmp_path, tiny, source), build_dir=tmp_path / "out", dry_run=dry, progress=False)
    assert files(dry / "me__tiny") == before


def test_no_absolute_local_path_reaches_the_card(tiny, source, tmp_path):
    built = tmp_path / "built"
    assert run_build(tiny, source, built) == 0
    again = write(tmp_path / "again.yaml", TINY.replace("name: tiny", "name: again").replace(
        "{kind: funsd}", f"{{kind: hf, name: {built}, config: plain}}"))
    manifest = write(tmp_path / "m2.yaml", f"datasets:\n  - {{repo: me/again, recipe: {again}}}\n")
    (result,) = push(manifest, build_dir=tmp_path / "out", dry_run=tmp_path / "dry", progress=False)
    for name in ("README.md", "dogood_build.json"):
        text = (result.folder / name).read_text(encoding="utf-8")
        assert str(tmp_path) not in text and str(built) not in text
    assert json.loads((result.folder / "dogood_build.json").read_text())["source"]["name"] == "built"


# -- resume --------------------------------------------------------------------------------------------------
def test_resume_does_not_reuse_shards_of_another_source_with_the_same_ids(tiny, copy_funsd_forms, tmp_path,
                                                                          monkeypatch):
    a = copy_funsd_forms(tmp_path / "a", n=2)
    b = copy_funsd_forms(tmp_path / "b", n=2)
    first = sorted((b / "testing_data" / "annotations").glob("*.json"))[0]
    raw = first.read_bytes()
    at = re.search(rb'"words": \[\s*\{\s*"box": \[[^\]]*\],\s*"text": "[A-Za-z]', raw).end() - 1  # a word's text
    changed = raw[:at] + (b"Q" if raw[at:at + 1] != b"Q" else b"R") + raw[at + 1:]  # same size
    first.write_bytes(changed)
    twin = a / "testing_data" / "annotations" / first.name
    st = twin.stat()
    os.utime(first, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size and mtime as in `a`
    assert first.stat().st_size == twin.stat().st_size and first.stat().st_mtime_ns == twin.stat().st_mtime_ns

    import dogood.pipeline.worker as worker_module

    real = worker_module.document_to_row
    calls = []

    def interrupt(*args, **kwargs):  # killed on the second document: the first shard is finished
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    out = tmp_path / "out"
    monkeypatch.setattr(worker_module, "document_to_row", interrupt)
    with pytest.raises(KeyboardInterrupt):
        build(load_recipe(tiny), out, source_path=a, progress=False)
    monkeypatch.setattr(worker_module, "document_to_row", real)
    assert (tmp_path / ".out.partial").is_dir()
    report = build(load_recipe(tiny), out, source_path=b, progress=False)
    assert report.reused_shards == 0
    assert changed[at:at + 1].decode() in load(out)[0]["tokens"][0][:1]
    fresh = build(load_recipe(tiny), tmp_path / "fresh" / out.name, source_path=b, progress=False)  # the card names it
    assert fresh.reused_shards == 0
    assert {k: v for k, v in files(out).items()} == files(tmp_path / "fresh" / out.name)


# -- YAML ------------------------------------------------------------------------------------------------------
def test_a_yaml_alias_bomb_is_refused(tmp_path):
    levels = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    levels += [f"a{k}: &a{k} [{', '.join([f'*a{k - 1}'] * 9)}]" for k in range(1, 9)]
    bomb = write(tmp_path / "bomb.yaml", TINY + "description: {" + ", ".join(levels) + "}\n")
    assert len(bomb.read_bytes()) < 1000  # 9**9 (387 million) strings once expanded
    with pytest.raises(RecipeError, match=r"aliases \(\*a0\) are not allowed") as err:
        load_recipe(bomb)
    assert str(bomb) in str(err.value)


def test_duplicate_keys_are_refused(tmp_path):
    recipe = write(tmp_path / "dup.yaml", TINY + "seed: 1\nseed: 2\n")
    with pytest.raises(RecipeError, match="duplicate key 'seed'"):
        load_recipe(recipe)


def test_combinations_are_capped(tmp_path):
    configs = "".join(f"  c{k}: []\n" for k in range(40))
    recipe = write(tmp_path / "many.yaml", TINY.split("configs:")[0] + "configs:\n" + configs
                   + "combinations: {of: [" + ", ".join(f"c{k}" for k in range(40)) + "], sizes: [20]}\n")
    with pytest.raises(RecipeError, match=r"would make \d+ configs; a recipe may have at most 1000"):
        load_recipe(recipe)


def test_a_bomb_in_a_push_manifest_is_refused_with_a_short_message(tmp_path, capsys):
    lines = ["a0: &a0 [" + ", ".join(['"' + "x" * 50 + '"'] * 10) + "]"]
    lines += [f"a{k}: &a{k} [{', '.join([f'*a{k - 1}'] * 10)}]" for k in range(1, 9)]
    manifest = write(tmp_path / "m.yaml", "\n".join(lines) + "\ndatasets:\n  - {repo: *a8, recipe: funsd-l}\n")
    assert main(["push", str(manifest), "--dry-run", str(tmp_path / "dry")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("dogood: error:") and "aliases" in err and len(err) < 1000


# -- local files named by a dataset -------------------------------------------------------------------------------
def png_file(path: Path, size=(100, 50)) -> Path:
    Image.new("L", size, 255).save(path)
    return path


def parquet_with_path_cell(tmp_path, path: str, tags=("O",)) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    image = pa.array([{"bytes": None, "path": path}], pa.struct([("bytes", pa.binary()), ("path", pa.string())]))
    table = pa.table({"id": ["doc-1"], "image": image, "tokens": [["x"] * len(tags)],
                      "bboxes": [[[0, 0, 10, 10]] * len(tags)], "ner_tags": [list(tags)]})
    out = tmp_path / f"rows-{len(list(tmp_path.glob('rows-*')))}.parquet"
    pq.write_table(table, out)
    return out


def test_a_dataset_cannot_make_dogood_open_local_files(tmp_path):
    from dogood.sources.hf_dataset import HFDatasetSource

    src = HFDatasetSource(name=str(parquet_with_path_cell(tmp_path, "/etc/passwd")), split="test")
    with pytest.raises(DocumentError, match="names a local file '/etc/passwd'.*allow_local_paths") as err:
        src.load("doc-1")
    assert "doc-1" in str(err.value)
    # the user can opt in, for a dataset of their own
    page = png_file(tmp_path / "page.png")
    mine = HFDatasetSource(name=str(parquet_with_path_cell(tmp_path, str(page))), split="test", allow_local_paths=True)
    assert mine.load("doc-1").width == 100
    parsed = parse_recipe({"name": "x", "version": "1.0.0", "configs": {"a": []},
                           "source": {"kind": "hf", "name": "n", "allow_local_paths": True}})
    assert parsed.source["allow_local_paths"] is True


# -- pixels ---------------------------------------------------------------------------------------------------------
def garbage_png(width: int, height: int) -> bytes:
    """A PNG whose chunks and CRCs are valid but whose pixel data is not (a truncated, scrambled stream)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    idat = zlib.compress(bytes([7]) * 64)  # filter type 7 does not exist, and far too few bytes
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def test_a_png_with_garbage_pixels_is_never_published(tiny, source, tmp_path, capsys):
    first = sorted((source / "testing_data" / "images").glob("*.png"))[0]
    with Image.open(first) as im:
        size = im.size
    first.write_bytes(garbage_png(*size))
    tiny.write_text(TINY.replace("shard_size: 1\n", ""), encoding="utf-8")  # one shard: never an empty one
    PageImage.from_file(first)  # the header and chunks pass the cheap check...
    out = tmp_path / "out"
    assert run_build(tiny, source, out) == 1  # ...the pixels do not
    err = capsys.readouterr().err
    assert f"document '{first.stem}' failed" in err and "cannot decode image" in err and "Traceback" not in err
    assert not out.exists()
    assert run_build(tiny, source, out, "--on-error", "skip") == 0
    rows = load(out)
    assert rows.num_rows == 1 and first.stem not in rows["id"]
    for row in rows:
        row["image"].load()


def test_the_pixel_limit_is_pillows_default():
    import PIL.Image

    assert PIL.Image.MAX_IMAGE_PIXELS == int(1024 * 1024 * 1024 // 4 // 3)  # what readers of the dataset apply
    big = PageImage.from_bytes(_png_of(64, 64))
    big.width, big.height = 10_000, 10_000  # declared by a shift's output, say
    with pytest.raises(DocumentError, match="above Pillow's limit"):
        big.check_pixels()


def _png_of(width, height) -> bytes:
    buf = io.BytesIO()
    Image.new("L", (width, height), 255).save(buf, format="PNG")
    return buf.getvalue()


# -- CLI values -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("option", [["--limit", "0"], ["--limit", "-3"], ["--num-proc", "0"], ["--limit", "x"]])
def test_counts_below_one_are_usage_errors(tiny, source, tmp_path, option, capsys):
    with pytest.raises(SystemExit) as exit_:
        run_build(tiny, source, tmp_path / "out", *option)
    assert exit_.value.code == 2
    assert option[0] in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_a_repeated_config_is_built_once(tiny, source, tmp_path, capsys):
    out = tmp_path / "out"
    assert run_build(tiny, source, out, "--config", "plain", "--config", "plain") == 0
    assert "x 1 config(s) (plain)" in capsys.readouterr().out
    assert load(out).num_rows == 2


def test_a_repeated_split_is_refused(tmp_path):
    with pytest.raises(RecipeError, match="split 'test' is listed twice"):
        load_recipe(write(tmp_path / "r.yaml", TINY.replace("splits: [test]", "splits: [test, train, test]")))


def test_workers_are_capped_at_the_number_of_documents(tiny, source, tmp_path, monkeypatch):
    real = multiprocessing.get_context
    pools = []

    def spy(method=None):
        ctx = real(method)

        class Counting:
            def Pool(self, n, *args, **kwargs):  # noqa: N802 (multiprocessing's name)
                pools.append(n)
                return ctx.Pool(n, *args, **kwargs)

        return Counting()

    monkeypatch.setattr(multiprocessing, "get_context", spy)
    build(load_recipe(tiny), tmp_path / "out", source_path=source, num_proc=16, progress=False)
    assert pools == [1]  # two documents: two processes, the driver and one pool worker


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", "[1, .nan]"])
def test_nan_and_infinite_shift_parameters_are_refused(value):
    data = {"name": "x", "version": "1.0.0", "source": {"kind": "funsd"},
            "configs": {"a": [{"shift": "merge", "lambda_x": __import__("yaml").safe_load(value)}]}}
    with pytest.raises(RecipeError, match="parameter lambda_x must be .*finite|parameter lambda_x must be a number"):
        parse_recipe(data)


@pytest.mark.parametrize("bad", [{"id": 1.5}, {"id": True}, {"linking": [[True, 0]]}, {"linking": [[0.5, 0]]}])
def test_float_and_boolean_entity_ids_are_refused(bad):
    from dogood.sources.funsd import parse_funsd

    entity = {"id": 0, "label": "other", "words": [{"text": "a", "box": [0, 0, 5, 5]}], "linking": []}
    image = PageImage.from_bytes(_png_of(20, 20))
    with pytest.raises(DocumentError, match="must be an integer"):
        parse_funsd("doc", {"form": [{**entity, **bad}]}, image)


@pytest.mark.parametrize("tag", [True, 1.0])
def test_float_and_boolean_tags_are_refused_by_the_hf_source(tmp_path, tag):
    from dogood.sources.hf_dataset import HFDatasetSource

    page = png_file(tmp_path / "p.png")
    import pyarrow as pa
    import pyarrow.parquet as pq

    image = pa.array([{"bytes": page.read_bytes(), "path": "p.png"}],
                     pa.struct([("bytes", pa.binary()), ("path", pa.string())]))
    pq.write_table(pa.table({"id": ["d"], "image": image, "tokens": [["x"]], "bboxes": [[[0, 0, 5, 5]]],
                             "ner_tags": [[tag]]}), tmp_path / "t.parquet")
    src = HFDatasetSource(name=str(tmp_path / "t.parquet"), split="test")
    with pytest.raises(DocumentError, match="ner_tags must be integers or tag names"):
        src.load("d")


# -- clean errors ----------------------------------------------------------------------------------------------------
def clean_error(capsys, *needles) -> str:
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]  # after any progress bars of datasets
    assert last.startswith("dogood: error:") and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


def test_a_file_name_that_is_not_utf8(tiny, source, tmp_path, capsys):
    folder = source / "testing_data"
    first = sorted((folder / "annotations").glob("*.json"))[0]
    bad = os.fsdecode(b"form-\xff")
    os.rename(first, folder / "annotations" / f"{bad}.json")
    os.rename(folder / "images" / f"{first.stem}.png", folder / "images" / f"{bad}.png")
    assert run_build(tiny, source, tmp_path / "out") == 1
    clean_error(capsys, "not valid Unicode")


@pytest.mark.parametrize("change, needle", [
    (("splits: [test]", "splits: 5"), "splits must be a split name or a list"),
    (("{kind: funsd}", "{kind: funsd, colour: red}"), "source 'funsd' has no option 'colour'"),
    (("name: tiny", "name: ../tiny"), "must be letters, digits"),
])
def test_bad_recipes_are_one_line_errors(tiny, source, tmp_path, change, needle, capsys):
    tiny.write_text(TINY.replace(*change), encoding="utf-8")
    assert run_build(tiny, source, tmp_path / "out") == 1
    clean_error(capsys, needle, str(tiny) if "option" not in needle else "")


def test_deeply_nested_json_is_a_document_error(tiny, source, tmp_path, capsys):
    first = sorted((source / "testing_data" / "annotations").glob("*.json"))[0]
    first.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert run_build(tiny, source, tmp_path / "out") == 1
    clean_error(capsys, first.name, "nested too deeply")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_output_folder(tiny, source, tmp_path, capsys):
    parent = tmp_path / "ro"
    parent.mkdir()
    parent.chmod(0o555)
    try:
        assert run_build(tiny, source, parent / "out") == 1
        clean_error(capsys, str(parent))
    finally:
        parent.chmod(0o755)


def test_a_read_only_output_folder_even_as_root(tiny, source, tmp_path, monkeypatch, capsys):
    import dogood.pipeline.safety

    real = os.open

    def read_only(path, *args, **kwargs):  # what a read-only folder answers to a user who is not root
        if str(path).startswith(str(tmp_path / "ro")):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(dogood.pipeline.safety.os, "open", read_only)
    assert run_build(tiny, source, tmp_path / "ro" / "out") == 1
    clean_error(capsys, str(tmp_path / "ro"), "Permission denied")


def test_skipped_documents_never_leave_an_empty_shard(tiny, source, tmp_path, capsys):
    first = sorted((source / "testing_data" / "annotations").glob("*.json"))[0]
    first.write_text("{", encoding="utf-8")
    out = tmp_path / "out"
    assert run_build(tiny, source, out, "--on-error", "skip") == 0  # shard_size 1: shard 0 has no rows
    assert sorted(p.name for p in (out / "data" / "plain").iterdir()) == ["test-00001-of-00002.parquet"]
    assert load(out).num_rows == 1
    second = sorted((source / "testing_data" / "annotations").glob("*.json"))[1]
    second.write_text("{", encoding="utf-8")
    assert run_build(tiny, source, tmp_path / "none", "--on-error", "skip") == 1
    clean_error(capsys, "split 'test' has no document to write (all 2 were skipped)")
    assert not (tmp_path / "none").exists()


def test_an_output_below_a_file(tiny, source, tmp_path, capsys):
    write(tmp_path / "afile", "mine")
    assert run_build(tiny, source, tmp_path / "afile" / "out") == 1
    clean_error(capsys, "afile")
    assert (tmp_path / "afile").read_text() == "mine"


def test_eval_out_on_a_file(tmp_path, capsys):
    report = write(tmp_path / "report", "mine")
    assert main(["eval", "--id", "nowhere", "--ood", "nowhere", "--out", str(report)]) == 1
    clean_error(capsys, "is a file")
    assert report.read_text() == "mine"


def test_eval_does_not_replace_report_files_of_the_user(tmp_path, capsys):
    folder = tmp_path / "paper"
    write(folder / "report.md", "# my own report\n")
    assert main(["eval", "--id", "nowhere", "--ood", "nowhere", "--out", str(folder)]) == 1
    clean_error(capsys, "report.md, which is not a dogood eval report")
    assert (folder / "report.md").read_text() == "# my own report\n"


def test_preview_does_not_replace_a_file_that_is_not_a_png(tiny, source, tmp_path, capsys):
    mine = write(tmp_path / "notes.txt", "mine")
    assert main(["preview", str(tiny), "--source", str(source), "--out", str(mine)]) == 1
    clean_error(capsys, "is not a PNG image")
    assert mine.read_text() == "mine"


def test_train_baseline_does_not_replace_a_file_that_is_not_a_model(tmp_path, capsys):
    mine = write(tmp_path / "thesis.tex", "mine")
    assert main(["train-baseline", "--out", str(mine), "--limit", "1", "--eval-split", "none"]) == 1
    clean_error(capsys, "is not a dogood model file")
    assert mine.read_text() == "mine"


@pytest.mark.parametrize("line", [b"[1, 2]", b"{", b"[" * 100_000, b"\xff\xfe",
                                  b'{"id": "a", "ner_tags": ["O"], "confidences": 5}'])
def test_bad_prediction_lines(tmp_path, line):
    from dogood.models.predictions import PredictionError, read_predictions

    path = tmp_path / "p.jsonl"
    path.write_bytes(line + b"\n")
    with pytest.raises(PredictionError, match=str(path).replace("\\", "\\\\")):
        read_predictions(path, "token")


def test_a_parquet_source_with_no_rows(tiny, tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    empty = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"id": pa.array([], pa.string()), "ner_tags": pa.array([], pa.list_(pa.string())),
                             "image": pa.array([], pa.struct([("bytes", pa.binary()), ("path", pa.string())]))}), empty)
    tiny.write_text(TINY.replace("{kind: funsd}", f"{{kind: hf, name: {empty}}}"), encoding="utf-8")
    assert main(["build", str(tiny), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    clean_error(capsys, str(empty))


def test_hub_and_network_failures(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_TOKEN", "hf_not_a_real_token")  # offline in tests: the Hub cannot be reached
    manifest = write(tmp_path / "m.yaml", "datasets:\n  - {repo: me/x, recipe: funsd-l, configs: [merge]}\n")
    assert main(["push", str(manifest), "--build-dir", str(tmp_path / "out")]) == 1
    clean_error(capsys)
    assert not (tmp_path / "out").exists()


def test_an_interrupt_is_exit_130_with_one_line(monkeypatch, capsys):
    from dogood.cli import list_command

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(list_command, "cmd_list", interrupted)
    assert main(["list"]) == 130
    err = capsys.readouterr().err
    assert err.startswith("dogood: interrupted") and err.count("\n") == 1
