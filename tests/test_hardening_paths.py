"""Issue 26, paths and links: one policy (:mod:`dogood.core.fs`) applied by every command.

- names read from data (config, split, recipe) are checked by one function before they become paths: ``..``,
  absolute names and names ending in a newline are refused;
- dogood follows no link it did not make in its own folders: a planted ``.NAME.lock``, symlinked
  ``data/<config>`` or ``.shards`` in the work folder, a ``.NAME.old-PID`` link, a link in a build that push
  would stage;
- nothing local leaves the machine: a path given with ``--set`` is recorded by its last part and content hash
  (card, ``dogood_build.json``, every shard), push scans every staged byte (Parquet cells included), the
  gallery shows no local folder;
- leftovers of killed runs (export, gallery, push --dry-run, eval) are removed by the next run; a one-document
  gallery copies nothing into the ``datasets`` cache.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from tiny_recipe import TINY

from dogood.cli import main
from dogood.core.errors import DogoodError
from dogood.core.fs import check_name, leftovers, recorded_path

REPO = Path(__file__).resolve().parents[1]



@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "recipes" / "tiny.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(TINY, encoding="utf-8")
    return path


@pytest.fixture
def source(copy_funsd_forms, tmp_path):
    return copy_funsd_forms(tmp_path / "data" / "funsd", n=2)


def build(tiny, source, out, *extra) -> int:
    return main(["build", str(tiny), "--source", str(source), "--out", str(out), "--quiet", *extra])


def last_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    line = err.strip().splitlines()[-1]
    assert line.startswith("dogood: error: "), err
    return line


def private_folder(path: Path) -> dict[str, bytes]:
    path.mkdir(parents=True)
    (path / "diary.txt").write_text("my secrets\n", encoding="utf-8")
    return {p.name: p.read_bytes() for p in path.iterdir()}


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# -- names --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["plain\n", "..", ".", "/etc", "a/b", "", "x" * 300, "ok\nno"])
def test_names_read_from_data_are_checked_with_z_anchored_patterns(name):
    for config in (False, True):
        with pytest.raises(DogoodError, match="must be letters"):
            check_name(name, "config name", config=config)
    assert check_name("merge@3", config=True) == "merge@3"


@pytest.mark.parametrize("where", ["recipe name", "config name", "split"])
def test_a_recipe_with_a_name_ending_in_a_newline_is_refused(tmp_path, capsys, where):
    """Before, ``$`` matched before the final newline and ``"plain\\n"`` became a folder name."""
    text = {"recipe name": TINY.replace("name: tiny", 'name: "tiny\\n"'),
            "config name": TINY.replace("  plain: []", '  "plain\\n": []'),
            "split": TINY.replace("splits: [test]", 'splits: ["test\\n"]')}[where]
    recipe = tmp_path / "r.yaml"
    recipe.write_text(text, encoding="utf-8")
    assert main(["build", str(recipe), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    last_error(capsys)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("config", ["..", "/ABS/evil", "a/../../b"])
def test_export_refuses_config_names_it_reads_that_are_paths(tiny, source, tmp_path, capsys, config):
    """A ``dogood_build.json`` whose config is ``..`` made export write beside ``--to`` and overwrite a user's file;
    an absolute name made folders anywhere."""
    out = tmp_path / "out"
    assert build(tiny, source, out) == 0
    config = config.replace("/ABS", str(tmp_path / "elsewhere"))
    info = json.loads((out / "dogood_build.json").read_text())
    info["chains"] = {config: []}
    (out / "dogood_build.json").write_text(json.dumps(info))
    users = tmp_path / "exports" / "test" / "documents.jsonl"
    users.parent.mkdir(parents=True)
    users.write_text("the user's own file\n")
    assert main(["export", str(out), "--format", "jsonl", "--to", str(tmp_path / "exports" / "x")]) == 1
    assert "config name" in last_error(capsys)
    assert users.read_text() == "the user's own file\n" and not (tmp_path / "elsewhere").exists()


def test_export_refuses_a_split_name_from_a_shard_file_name(tiny, source, tmp_path, capsys):
    out = tmp_path / "out"
    assert build(tiny, source, out) == 0
    shard = next((out / "data" / "plain").glob("*.parquet"))
    shutil.copy(shard, shard.with_name("..-00000-of-00001.parquet"))
    assert main(["export", str(out), "--format", "jsonl", "--to", str(tmp_path / "x")]) == 1
    assert "split name" in last_error(capsys)


# -- links in dogood's own folders ------------------------------------------------------------------------------
def test_a_planted_lock_link_is_refused_and_its_target_never_made(tiny, source, tmp_path, capsys):
    out = tmp_path / "out"
    target = tmp_path / "victim.txt"
    (tmp_path / ".out.lock").symlink_to(target)
    assert build(tiny, source, out) == 1
    assert ".out.lock is a symbolic link" in last_error(capsys)
    assert not target.exists() and not out.exists()  # before: the lock file was created at the link's target


@pytest.mark.parametrize("inside", ["data/plain", ".shards", "data"])
def test_links_in_the_work_folder_are_not_written_through(tiny, source, tmp_path, capsys, inside):
    out = tmp_path / "out"
    assert build(tiny, source, tmp_path / "first") == 0
    work = tmp_path / ".out.partial"
    work.mkdir()
    (work / ".dogood-build-key.json").write_text("{}")  # a work folder of a dogood build (another key)
    theirs = private_folder(tmp_path / "users")
    (work / inside).parent.mkdir(parents=True, exist_ok=True)
    (work / inside).symlink_to(tmp_path / "users", target_is_directory=True)
    assert build(tiny, source, out) == 0
    assert tree(tmp_path / "users") == theirs  # before: the shards were written into the user's folder
    assert tree(out)["data/plain/test-00000-of-00002.parquet"] == \
        tree(tmp_path / "first")["data/plain/test-00000-of-00002.parquet"]


def test_a_planted_old_folder_link_never_becomes_the_output(tiny, source, tmp_path):
    out = tmp_path / "out"
    private_folder(tmp_path / "users")
    (tmp_path / f".out.old-{os.getpid() + 1}").symlink_to(tmp_path / "users", target_is_directory=True)
    assert build(tiny, source, out) == 0
    assert not out.is_symlink() and (out / "dogood_build.json").is_file()
    assert (tmp_path / "users" / "diary.txt").read_text() == "my secrets\n"


def test_push_refuses_a_build_holding_a_link_and_stages_nothing_of_its_target(tiny, source, tmp_path, capsys):
    manifest = tmp_path / "hub.yaml"
    manifest.write_text(f"datasets:\n  - repo: me/tiny\n    recipe: {tiny}\n", encoding="utf-8")
    builds = tmp_path / "builds"
    assert build(tiny, source, builds / "tiny") == 0
    private_folder(tmp_path / "users")
    (builds / "tiny" / "previews" / "extra").symlink_to(tmp_path / "users", target_is_directory=True)
    staged = tmp_path / "staged"
    code = main(["push", str(manifest), "--build-dir", str(builds), "--source", str(source), "--dry-run", str(staged),
                 "--quiet"])
    # the build is not reused (it holds a link), push builds its own copy and stages that
    assert code == 0
    assert "my secrets" not in "".join(p.read_text(errors="replace") for p in staged.rglob("*") if p.is_file())
    from dogood.share.publish import PublishEntry, PublishError, load_manifest, stage

    entry = load_manifest(manifest)[0]
    with pytest.raises(PublishError, match="symbolic link"):
        stage(entry, builds / "tiny", tmp_path / "staged2")  # staged directly: refused, nothing written
    assert not (tmp_path / "staged2").exists()
    assert isinstance(entry, PublishEntry)


def test_push_refuses_a_build_whose_shard_changed_since_it_was_written(tiny, source, tmp_path):
    from dogood.share.publish import PublishError, load_manifest, stage

    manifest = tmp_path / "hub.yaml"
    manifest.write_text(f"datasets:\n  - repo: me/tiny\n    recipe: {tiny}\n", encoding="utf-8")
    out = tmp_path / "tiny"
    assert build(tiny, source, out) == 0
    shard = next((out / "data" / "plain").glob("*.parquet"))
    shard.write_bytes(shard.read_bytes()[:-10])
    with pytest.raises(PublishError, match=f"{shard} does not match the sha256"):
        stage(load_manifest(manifest)[0], out, tmp_path / "staged")
    assert not (tmp_path / "staged").exists()


# -- nothing local leaves the machine ----------------------------------------------------------------------
def test_a_path_given_with_set_is_recorded_by_its_last_part_and_content_hash(data_dir, funsd_dir, tmp_path):
    """``--set natural.annotations=/home/me/...`` used to land in the README, dogood_build.json and every shard."""
    secret = tmp_path / "home-of-someone" / "private"
    secret.mkdir(parents=True)
    annotations = secret / "coco.json"
    shutil.copy(data_dir / "coco" / "instances_train2017_coco128.json", annotations)
    out = tmp_path / "out"
    assert main(["build", "funsd-i", "--config", "natural", "--limit", "1", "--source", str(funsd_dir), "--out",
                 str(out), "--set", f"natural.annotations={annotations}", "--quiet"]) == 0
    shown = recorded_path(str(annotations))
    assert shown.startswith("coco.json#sha256:")
    for path in out.rglob("*"):
        if path.is_file() and path.suffix != ".jpg":
            assert b"home-of-someone" not in path.read_bytes(), path
    record = json.loads((out / "dogood_build.json").read_text())
    assert shown in json.dumps(record["chains"]) and any(shown in o for o in record["overrides"])
    provenance = pq.read_table(next((out / "data" / "natural").glob("*.parquet"))).column("dogood").to_pylist()
    assert shown in json.dumps(provenance)
    # the same file elsewhere gives the same rows: the seeds hash the content, not the folder
    moved = tmp_path / "elsewhere" / "coco.json"
    moved.parent.mkdir()
    shutil.copy(annotations, moved)
    again = tmp_path / "again"
    assert main(["build", "funsd-i", "--config", "natural", "--limit", "1", "--source", str(funsd_dir), "--out",
                 str(again), "--set", f"natural.annotations={moved}", "--quiet"]) == 0
    assert tree(again)["data/natural/test-00000-of-00001.parquet"] == tree(out)["data/natural/test-00000-of-00001.parquet"]


def test_push_scans_parquet_cells_for_local_paths(tiny, source, tmp_path):
    """A word whose text is a local path (outside the working, data, home and build folders) is refused, named by
    file, row and column; before, push looked only at the card and dogood_build.json."""
    from dogood.share.publish import PublishError, load_manifest, stage

    outside = tmp_path / "somewhere" / "else"
    outside.mkdir(parents=True)
    ann = sorted((source / "testing_data" / "annotations").glob("*.json"))[0]
    data = json.loads(ann.read_text())
    data["form"][0]["words"][0]["text"] = str(outside / "notes.txt")
    data["form"][0]["text"] = str(outside / "notes.txt")
    ann.write_text(json.dumps(data))
    out = tmp_path / "tiny"
    assert build(tiny, source, out) == 0
    manifest = tmp_path / "hub.yaml"
    manifest.write_text(f"datasets:\n  - repo: me/tiny\n    recipe: {tiny}\n", encoding="utf-8")
    with pytest.raises(PublishError, match=r"data/plain/test-00000-of-00002.parquet \(row 0, column tokens\[\d+\]\)"
                                           r" would publish"):
        stage(load_manifest(manifest)[0], out, tmp_path / "staged")
    assert not (tmp_path / "staged").exists()


def test_skip_reasons_in_the_card_name_no_local_folder(tiny, source, tmp_path):
    ann = sorted((source / "testing_data" / "annotations").glob("*.json"))[0]
    ann.write_text("{", encoding="utf-8")
    out = tmp_path / "out"
    assert build(tiny, source, out, "--on-error", "skip") == 0
    record = json.loads((out / "dogood_build.json").read_text())
    assert record["skipped"] and ann.name in record["skipped"][0]["reason"]
    for name in ("README.md", "dogood_build.json"):
        assert str(tmp_path) not in (out / name).read_text()


def test_the_gallery_shows_no_local_folder(tiny, source, tmp_path):
    out = tmp_path / "out"
    assert build(tiny, source, out) == 0
    moved = tmp_path / "moved-source"
    shutil.copytree(source, moved)
    ann = next((moved / "testing_data" / "annotations").glob("*.json"))
    ann.write_text(ann.read_text().replace('"text": "', '"text": "X', 1))  # other files: originals refused
    html = tmp_path / "gallery.html"
    assert main(["gallery", str(out), "--html", str(html), "--source", str(moved), "--docs", "1"]) == 0
    text = html.read_text()
    assert "is not the one the build read" in text and str(tmp_path) not in text  # before: the folder was named


# -- leftovers of killed runs -------------------------------------------------------------------------------
def killed(cmd: list[str], marker: str, cwd: Path) -> None:
    """Run ``python -m dogood CMD`` and SIGKILL it as soon as a file matching ``marker`` appears below ``cwd``."""
    import signal
    import time

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "dogood", *cmd], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and not list(cwd.glob(marker)):
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def test_a_killed_exports_partial_folder_is_removed_by_the_next_run(tiny, source, tmp_path):
    out = tmp_path / "out"
    assert build(tiny, source, out) == 0
    dest = tmp_path / "exp"
    killed(["export", str(out), "--format", "jsonl", "--to", str(dest)], ".exp.partial-*/plain/test/images/*", tmp_path)
    left = leftovers(dest)
    if not left:  # the export finished before the kill: make its leftover by hand, as a killed one leaves it
        pytest.skip("the export finished before it could be killed")
    assert main(["export", str(out), "--format", "jsonl", "--to", str(dest), "--overwrite"]) == 0
    assert not leftovers(dest) and not any(p.exists() for p in left)
    assert (dest / "plain" / "test" / "documents.jsonl").is_file()


def test_leftovers_of_dead_processes_are_removed_and_live_ones_kept(tiny, source, tmp_path):
    """Export, gallery, push --dry-run and eval all start by removing their dead predecessors' temporary folders
    and files (those marked as dogood's, of a process that no longer runs)."""
    out = tmp_path / "out"
    assert build(tiny, source, out) == 0
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    made = {}
    for dest in ("exp", "staged/me__tiny"):
        folder = tmp_path / Path(dest).parent / f".{Path(dest).name}.partial-{dead}"
        folder.mkdir(parents=True)
        (folder / ".dogood-partial").write_text(dead)
        (folder / "half.parquet").write_bytes(b"PAR1")
        made[dest] = folder
    runner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    alive = tmp_path / f".exp.partial-{runner.pid}"  # a run still going: never touched
    alive.mkdir()
    (alive / ".dogood-partial").write_text(str(runner.pid))
    foreign = tmp_path / f".exp.partial-{dead}0"  # not marked as dogood's: never touched
    foreign.mkdir()
    html_left = tmp_path / f".out-gallery.html.{dead}.abc123.partial"
    html_left.write_text("half a page")
    assert main(["export", str(out), "--format", "jsonl", "--to", str(tmp_path / "exp")]) == 0
    assert main(["gallery", str(out), "--docs", "1"]) == 0
    manifest = tmp_path / "hub.yaml"
    manifest.write_text(f"datasets:\n  - repo: me/tiny\n    recipe: {tiny}\n", encoding="utf-8")
    assert main(["push", str(manifest), "--build-dir", str(tmp_path), "--source", str(source), "--dry-run",
                 str(tmp_path / "staged"), "--quiet"]) == 0
    runner.kill()
    runner.wait()
    assert not any(folder.exists() for folder in made.values())
    assert not html_left.exists() and alive.is_dir() and foreign.is_dir()
    staged = tmp_path / "staged" / "me__tiny"
    assert (staged / "dogood_build.json").is_file() and list((staged / "data" / "plain").glob("*.parquet"))


def test_a_one_document_gallery_copies_nothing_into_the_datasets_cache(tiny, source, tmp_path):
    out = tmp_path / "out"
    assert build(tiny, source, out) == 0
    cache = Path(os.environ["HF_HOME"]) / "datasets"
    before = {p for p in cache.rglob("*.arrow")} if cache.is_dir() else set()
    assert main(["gallery", str(out), "--docs", "1"]) == 0
    after = {p for p in cache.rglob("*.arrow")} if cache.is_dir() else set()
    assert after == before  # before: the whole build was converted into the cache
