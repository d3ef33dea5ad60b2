"""A build killed with SIGKILL and run again finishes byte-identical, without redoing finished shards."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from dogood.pipeline.build import build
from dogood.pipeline.recipe import load_recipe

SCRIPT = textwrap.dedent(
    """
    import sys, time
    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import load_recipe
    from dogood.shifts.layout.merge import MergeBoxes

    slow = MergeBoxes.apply
    def apply(self, doc, rng):  # slow enough to be killed halfway
        time.sleep(0.05)
        return slow(self, doc, rng)
    MergeBoxes.apply = apply
    recipe = load_recipe("funsd-l")
    recipe.shard_size = 4
    build(recipe, sys.argv[1], source_path=sys.argv[2], configs=["merge", "merge_x0_y0"], limit=24, progress=False)
    """
)


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def recipe_with_small_shards():
    recipe = load_recipe("funsd-l")
    recipe.shard_size = 4
    return recipe


def test_sigkill_then_rerun_resumes_and_matches(funsd_dir, tmp_path):
    out = tmp_path / "out"
    work = tmp_path / ".out.partial"
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(out), str(funsd_dir)], env=os.environ.copy())
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if len(list((work / ".shards").glob("*.json"))) >= 2:
            break
        time.sleep(0.01)
    assert proc.poll() is None, "the build finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not out.exists()  # nothing that looks like a dataset
    finished = sorted(p.name for p in (work / ".shards").glob("*.json"))
    assert 2 <= len(finished) < 6
    kept = {p.relative_to(work).as_posix(): p.stat().st_mtime_ns for p in (work / "data").rglob("*.parquet")}
    assert not any(name.endswith(".tmp") for name in kept)

    report = build(recipe_with_small_shards(), out, source_path=funsd_dir, configs=["merge", "merge_x0_y0"], limit=24,
                   progress=False)
    assert report.reused_shards == len(finished)
    assert not work.exists() and not list(out.rglob(".*"))  # no work files left in the dataset
    for rel, mtime in kept.items():  # finished shards were kept, not written again
        assert (out / rel).stat().st_mtime_ns == mtime

    ref = tmp_path / "ref" / out.name  # the card names its folder: the same name, another place
    build(recipe_with_small_shards(), ref, source_path=funsd_dir, configs=["merge", "merge_x0_y0"], limit=24,
          progress=False)
    assert files(out) == files(ref)


def test_a_work_folder_of_another_build_is_not_reused(funsd_dir, tmp_path, capsys):
    out = tmp_path / "out"
    work = tmp_path / ".out.partial"
    work.mkdir()
    (work / ".dogood-build-key.json").write_text("{}")
    (work / "stale.txt").write_text("from another build")
    report = build(recipe_with_small_shards(), out, source_path=funsd_dir, configs=["merge"], limit=8, progress=True)
    assert report.reused_shards == 0 and not (out / "stale.txt").exists()
    err = capsys.readouterr().err
    assert f"dogood: nothing to resume in {work} (no finished shard of this build); starting afresh\n" in err
    build(recipe_with_small_shards(), tmp_path / "fresh", source_path=funsd_dir, configs=["merge"], limit=8,
          progress=True)
    assert "resume" not in capsys.readouterr().err  # no work folder: a fresh build says nothing of resuming


FUNSD_SIZE = textwrap.dedent(
    """
    import sys, time
    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import load_recipe
    from dogood.sources.funsd import FunsdSource

    slow = FunsdSource.load
    def load(self, doc_id):  # slow enough to be killed halfway
        time.sleep(0.1)
        return slow(self, doc_id)
    FunsdSource.load = load
    build(load_recipe("funsd"), sys.argv[1], source_path=sys.argv[2], progress=False)
    """
)


def test_an_interrupted_funsd_size_build_keeps_its_finished_shards(funsd_dir, tmp_path, capsys):
    """FUNSD test's 50 forms make 10 shards of 5 (no shard_size in the recipe): a build stopped halfway keeps
    what it finished, says so, and ends byte-identical in its rows to an uninterrupted build."""
    out = tmp_path / "out"
    work = tmp_path / ".out.partial"
    proc = subprocess.Popen([sys.executable, "-c", FUNSD_SIZE, str(out), str(funsd_dir)], env=os.environ.copy())
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if len(list((work / ".shards").glob("*.json"))) >= 3:
            break
        time.sleep(0.01)
    assert proc.poll() is None, "the build finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = len(list((work / ".shards").glob("*.json")))
    assert 3 <= finished < 10

    report = build(load_recipe("funsd"), out, source_path=funsd_dir, progress=True)
    assert report.reused_shards == finished and report.documents == {"test": 50}
    err = capsys.readouterr().err
    assert f"dogood: resumed {finished} of 10 shards ({5 * finished} documents) from {work}\n" in err
    names = sorted(p.name for p in (out / "data" / "original").iterdir())
    assert names == [f"test-{k:05d}-of-00010.parquet" for k in range(10)]

    ref = tmp_path / "ref" / out.name
    build(load_recipe("funsd"), ref, source_path=funsd_dir, progress=False)
    assert files(out) == files(ref)
    import datasets

    rows = datasets.load_dataset(str(out), "original", split="test")
    assert rows["id"] == sorted(rows["id"]) and len(rows) == 50
