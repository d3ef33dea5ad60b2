"""Issue 26, integrity: what dogood wrote is checked before it is used again, and every write failure names its file.

- a finished shard truncated (a power loss) or changed in the work folder is written again, never published;
  a tampered shard record is a rebuilt shard, never a traceback;
- the shard files carry the sha256 recorded when they were written (``dogood_build.json``);
- a full disk (write_table raising ENOSPC; a real tmpfs too small where one can be mounted) names the shard file,
  with no traceback (nor pyarrow's second one when its writer is collected);
- a damaged OCR cache entry is read again, blamed on the cache file, not on the page;
- untrusted model files: truncated, byte-flipped and header-crafted CRF models, a zip bomb, a member whose
  sha256 is not the one recorded: each a :class:`ModelError` naming the file, none takes dogood down.
"""

from __future__ import annotations

import errno
import gc
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import datasets
import pytest
from tiny_recipe import TINY

from dogood.cli import main
from dogood.core.errors import ModelError
from dogood.core.fs import sha256_file


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "recipes" / "tiny.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(TINY, encoding="utf-8")
    return path


@pytest.fixture
def source(copy_funsd_forms, tmp_path):
    return copy_funsd_forms(tmp_path / "data" / "funsd", n=2)


def build(tiny, source, out, *extra, quiet: bool = True) -> int:
    return main(["build", str(tiny), "--source", str(source), "--out", str(out), *(["--quiet"] if quiet else []),
                 *extra])


def interrupted_build(tiny, source, out, monkeypatch, after: int = 1) -> Path:
    """Run a build that stops (Ctrl-C) at document ``after + 1``: its work folder keeps ``after`` finished shards."""
    import dogood.pipeline.pool as pool

    real = pool.process_task
    calls = []

    def stop(task):
        calls.append(task)
        if len(calls) > after:
            raise KeyboardInterrupt
        return real(task)

    monkeypatch.setattr(pool, "process_task", stop)
    assert build(tiny, source, out) == 130
    monkeypatch.setattr(pool, "process_task", real)
    work = out.with_name(f".{out.name}.partial")
    assert len(list((work / ".shards").glob("*.json"))) == after
    return work


def load(folder: Path, tmp_path: Path) -> datasets.Dataset:
    return datasets.load_dataset(str(folder), "plain", split="test", cache_dir=str(tmp_path / f"hf-{folder.name}"))


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# -- resume ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_damaged_finished_shard_is_written_again_not_published(tiny, source, tmp_path, monkeypatch, capsys, damage):
    fresh = tmp_path / "fresh"
    assert build(tiny, source, fresh) == 0
    out = tmp_path / "out"
    work = interrupted_build(tiny, source, out, monkeypatch)
    shard = next((work / "data" / "plain").glob("test-00000-*.parquet"))
    data = shard.read_bytes()
    shard.write_bytes(data[: len(data) // 2] if damage == "truncate" else data[:100] + bytes([data[100] ^ 1]) + data[101:])
    capsys.readouterr()
    assert build(tiny, source, out, quiet=False) == 0
    err = capsys.readouterr().err
    assert f"shard file {shard} does not match the sha256" in err and "nothing to resume" in err
    assert len(load(out, tmp_path)) == 2  # before: "resumed 1 of 2", exit 0, and load_dataset failed
    assert files(out)["data/plain/test-00000-of-00002.parquet"] == files(fresh)["data/plain/test-00000-of-00002.parquet"]


@pytest.mark.parametrize("record", [
    {"documents": "x"}, {"documents": 1, "skipped": [], "stats": {"plain": {"words": "many"}},
                         "files": {"plain": {"num_rows": 1, "num_bytes": 1, "sha256": "0" * 64}}},
    [], "text", {"documents": 1, "skipped": [{"id": 1}], "stats": {}, "files": {}},
])
def test_a_tampered_shard_record_is_rebuilt_without_a_traceback(tiny, source, tmp_path, monkeypatch, capsys, record):
    out = tmp_path / "out"
    work = interrupted_build(tiny, source, out, monkeypatch)
    (work / ".shards" / "test-00000.json").write_text(json.dumps(record), encoding="utf-8")
    capsys.readouterr()
    assert build(tiny, source, out) == 0  # before: a TypeError traceback from the totals
    assert "Traceback" not in capsys.readouterr().err
    assert len(load(out, tmp_path)) == 2


def test_the_build_records_each_files_sha256(tiny, source, tmp_path):
    out = tmp_path / "out"
    assert build(tiny, source, out) == 0
    recorded = json.loads((out / "dogood_build.json").read_text())["sha256"]
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} - {"README.md", "dogood_build.json"}
    assert set(recorded) == on_disk and len(recorded) >= 3  # two shards and a preview
    assert all(sha256_file(out / rel) == digest for rel, digest in recorded.items())


# -- a full disk --------------------------------------------------------------------------------------------
def test_a_full_disk_names_the_shard_file_and_prints_no_traceback(tiny, source, tmp_path, monkeypatch, capsys):
    import pyarrow.parquet as pq

    def full(self, table, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pq.ParquetWriter, "write_table", full)
    out = tmp_path / "out"
    assert build(tiny, source, out) == 1
    gc.collect()  # pyarrow's ParquetWriter.__del__ would print a second traceback for a writer left open
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert lines[-1].startswith("dogood: error: ") and "test-00000-of-00002.parquet: No space left on device" in err
    assert "Traceback" not in err and "Exception ignored" not in err
    assert not out.exists()
    assert not list(tmp_path.glob(".out.partial/data/plain/.*.tmp"))  # the half-written file is gone



def _can_mount_tmpfs(folder: Path) -> bool:
    if not shutil.which("unshare"):
        return False
    folder.mkdir(exist_ok=True)
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs '{folder}'"],
                           capture_output=True)
    return probe.returncode == 0


def test_a_real_full_disk_names_the_shard_file_and_prints_no_traceback(tiny, source, tmp_path):
    """A real file system too small for the build (a 160 KiB tmpfs, mounted in a user namespace where the system
    allows one): the build stops with one error line naming the shard it could not write."""
    small = tmp_path / "small"
    if not _can_mount_tmpfs(small):
        pytest.skip("no tmpfs can be mounted here (unshare -rm refused)")
    import dogood

    env = {**os.environ, "PYTHONPATH": str(Path(dogood.__file__).resolve().parents[1])}
    script = (f"mount -t tmpfs -o size=160k tmpfs '{small}' && "
              f"'{sys.executable}' -m dogood build '{tiny}' --source '{source}' --out '{small}/out' --quiet; "
              f"echo rc=$?; ls -A '{small}'")
    run = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, env=env,
                         timeout=600)
    assert "rc=1" in run.stdout, run.stdout + run.stderr
    err = run.stderr.strip().splitlines()
    assert err and err[-1].startswith("dogood: error: "), run.stderr
    assert ".parquet" in err[-1] and "No space left on device" in err[-1] and f"{small}/.out.partial/" in err[-1]
    assert "Traceback" not in run.stderr and "Exception ignored" not in run.stderr
    assert "out" not in run.stdout.split("rc=1", 1)[1].split()  # no output folder was published


# -- the OCR cache --------------------------------------------------------------------------------------------
def test_a_damaged_ocr_cache_entry_is_read_again_and_blamed_on_the_cache_file(data_dir, tmp_path, monkeypatch):
    from dogood.core.document import PageImage
    from dogood.page import ocr

    monkeypatch.setenv("DOGOOD_CACHE", str(tmp_path / "cache"))
    page = PageImage.from_file(next((data_dir / "rvl_cdip" / "images").rglob("*.tif")))
    words = ocr.ocr_words(page)
    path = ocr.ocr_cache_path(page)
    entry = json.loads(path.read_text())
    assert entry["sha256"] == hashlib.sha256(json.dumps(entry["words"], ensure_ascii=False, separators=(",", ":"),
                                                        sort_keys=True).encode()).hexdigest()
    for damage in ({"box": ["x", 0, 1, 2]}, {"box": [0, 0, 10**9, 5]}, {"text": 5}):
        bad = json.loads(path.read_text())
        bad["words"][0].update(damage)
        bad.pop("sha256")  # an entry of an older dogood (no checksum): still checked word by word
        path.write_text(json.dumps(bad))
        with pytest.warns(UserWarning, match=f"OCR cache file {path} is damaged"):
            assert ocr.ocr_words(page) == words  # before: a DocumentError blaming the page
    bad = json.loads(path.read_text())
    bad["words"][0]["text"] = "tampered"  # well-formed, but not what was written
    path.write_text(json.dumps(bad))
    with pytest.warns(UserWarning, match="do not match the sha256"):
        assert ocr.ocr_words(page) == words
    assert json.loads(path.read_text())["words"] == entry["words"]  # rewritten


# -- untrusted model files -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def crf_model(funsd_dir, tmp_path_factory) -> Path:
    from dogood.models.baseline import train_baseline
    from dogood.sources.funsd import FunsdSource

    src = FunsdSource(root=funsd_dir, split="train")
    model = train_baseline([src.load(i) for i in src.ids()[:6]], max_iterations=10)
    return model.save(tmp_path_factory.mktemp("crf") / "small.dogood-model")


def crafted(good: Path, dest: Path, model: bytes, keep_checksums: bool = False) -> Path:
    with zipfile.ZipFile(good) as zf:
        meta = json.loads(zf.read("meta.json"))
    if not keep_checksums:
        meta.pop("sha256")  # an attacker recomputes or drops them: the parser must survive either way
    with zipfile.ZipFile(dest, "w") as zf:
        zf.writestr("meta.json", json.dumps(meta))
        zf.writestr("model.crfsuite", model)
    return dest


def test_crafted_crf_models_are_model_errors_and_dogood_survives(crf_model, tmp_path):
    """Truncated, byte-flipped and header-crafted CRF files: before, most ended in a segmentation fault."""
    from dogood.models.baseline import BaselineTagger

    with zipfile.ZipFile(crf_model) as zf:
        model = zf.read("model.crfsuite")
    rng = random.Random(0)
    cases = {f"truncated-{f}": model[: int(len(model) * f)] for f in (0.01, 0.3, 0.9, 0.999)}
    for k in range(3):
        flipped = bytearray(model)
        for _ in range(20):
            flipped[rng.randrange(len(flipped))] = rng.randrange(256)
        cases[f"flipped-{k}"] = bytes(flipped)
    for offset in (20, 28, 40):
        header = bytearray(model)
        header[offset:offset + 4] = b"\xff\xff\xff\x7f"
        cases[f"header-{offset}"] = bytes(header)
    for name, data in cases.items():
        path = crafted(crf_model, tmp_path / f"{name}.dogood-model", data)
        with pytest.raises(ModelError, match="model.crfsuite is corrupt or crafted") as err:
            BaselineTagger.load(path)  # checked before CRFsuite's C code sees a byte
        assert str(path) in str(err.value), name


def test_a_member_that_does_not_match_its_checksum_is_refused(crf_model, tmp_path):
    from dogood.models.baseline import BaselineTagger

    with zipfile.ZipFile(crf_model) as zf:
        model = zf.read("model.crfsuite")
    path = crafted(crf_model, tmp_path / "changed.dogood-model", model[:-1] + bytes([model[-1] ^ 1]),
                   keep_checksums=True)
    with pytest.raises(ModelError, match="model.crfsuite does not match the sha256"):
        BaselineTagger.load(path)
    assert BaselineTagger.load(crf_model).labels  # the saved file itself passes


def test_a_zip_bomb_model_is_refused_before_it_expands(tmp_path):
    """A few hundred kilobytes that declare a member of 300 MB: refused from the zip's directory, nothing read."""
    import resource

    from dogood.models import load_model

    path = tmp_path / "bomb.dogood-model"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("meta.json", json.dumps({"format": "dogood-crf-baseline", "format_version": 1,
                                             "feature_version": 1}))
        with zf.open("model.crfsuite", "w", force_zip64=True) as member:
            block = bytes(1 << 20)
            for _ in range(300):
                member.write(block)
    assert path.stat().st_size < 1 << 20
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ModelError, match=f"{path}.*expands to 314572800 bytes"):
        load_model(path)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100 * 1024  # KiB: nothing expanded


def test_eval_with_a_crafted_model_is_one_error_line(crf_model, tmp_path, capsys):
    with zipfile.ZipFile(crf_model) as zf:
        model = zf.read("model.crfsuite")
    path = crafted(crf_model, tmp_path / "t.dogood-model", model[: len(model) // 3])
    assert main(["eval", "--model", str(path), "--id", "funsd", "--ood", "funsd", "--limit", "1",
                 "--out", str(tmp_path / "report"), "--bootstrap", "0", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].startswith("dogood: error:") and str(path) in err and "Traceback" not in err
    assert not (tmp_path / "report").exists()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork to survive a crash")
def test_no_model_file_that_passes_the_check_crashes_crfsuite(crf_model, funsd_test):
    """200 random mutations of a real CRF file (bytes, 4-byte values, header fields): each is refused by
    :func:`check_crf_model` or opens, dumps and tags real documents without a crash (run in a forked child)."""
    import signal
    import struct

    import pycrfsuite

    from dogood.models.baseline import word_features
    from dogood.models.crf_file import CrfFileError, check_crf_model

    with zipfile.ZipFile(crf_model) as zf:
        model = zf.read("model.crfsuite")
    assert check_crf_model(model)[1] >= 2
    features = [word_features(funsd_test.load(i)) for i in funsd_test.ids()[:2]]
    rng = random.Random(1)
    refused = crashed = 0
    for _ in range(200):
        data = bytearray(model)
        at = rng.randrange(0, len(data) - 4) & ~3 if rng.random() < 0.7 else rng.choice(range(4, 48, 4))
        data[at:at + 4] = struct.pack("<I", rng.choice([0, 1, 0xFFFFFFFF, len(data), rng.randrange(1 << 32)]))
        data = bytes(data)
        try:
            check_crf_model(data)
        except CrfFileError:
            refused += 1
            continue
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            signal.alarm(30)
            try:
                tagger = pycrfsuite.Tagger()
                tagger.open_inmemory(data)
                tagger.dump(os.devnull)
                for f in features:
                    tagger.set(pycrfsuite.ItemSequence(f))
                    tagger.tag()
            finally:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        crashed += os.WIFSIGNALED(status)
    assert crashed == 0 and refused > 100
