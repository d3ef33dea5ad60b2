"""`dogood push` end to end through the real huggingface_hub client and the test Hub server."""

from __future__ import annotations

import shutil
from pathlib import Path

import datasets
import pytest
import yaml
from hub_server import HubServer, hub_environment

from dogood.cli import main as cli
from dogood.pipeline.recipe import load_recipe
from dogood.share.publish import PublishError, push

TOKEN = "hf_test"
REPO = "tester/funsd-l"
TAG = f"v{load_recipe('funsd-l').version}"  # the recipe's version, as push tags it


@pytest.fixture
def hub(monkeypatch):
    with HubServer() as server, hub_environment(server.url):
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        yield server
    assert not server.errors, "\n".join(server.errors)


@pytest.fixture(scope="module")
def built(funsd_dir, tmp_path_factory):
    """A finished funsd-l build (merge, merge_x0_y0) that pushes reuse, and its manifest."""
    base = tmp_path_factory.mktemp("push")
    manifest = base / "manifest.yaml"
    manifest.write_text(f"datasets:\n  - repo: {REPO}\n    recipe: funsd-l\n    configs: [merge, merge_x0_y0]\n")
    push(manifest, build_dir=base / "out", dry_run=base / "dry", source=str(funsd_dir), progress=False)
    return base


def fresh_copy(built: Path, tmp_path: Path) -> tuple[Path, Path]:
    shutil.copytree(built / "out", tmp_path / "out")
    return built / "manifest.yaml", tmp_path / "out"


def test_push_then_load_the_tag_gives_the_local_rows(hub, built, tmp_path):
    manifest, out = fresh_copy(built, tmp_path)
    [result] = push(manifest, build_dir=out, progress=False)
    assert result.uploaded and result.tag == TAG
    assert hub.tags(REPO)[TAG] == result.commit == hub.resolve(REPO, "main")
    local = out / "funsd-l"
    for config in ("merge", "merge_x0_y0"):
        remote = datasets.load_dataset(REPO, config, split="test", revision=TAG)
        mine = datasets.load_dataset(str(local), config, split="test")
        assert remote.num_rows == mine.num_rows == 50
        assert remote.features == mine.features
        assert remote.to_dict() == mine.to_dict()
    files = hub.files(REPO, TAG)
    card = files["README.md"].decode()
    header = yaml.safe_load(card.split("---")[1])
    for entry in header["configs"]:
        for f in entry["data_files"]:
            prefix = f["path"].split("*")[0]
            assert any(p.startswith(prefix) and p.endswith(".parquet") for p in files), f["path"]
    assert {"previews/merge.jpg", "previews/merge_x0_y0.jpg"} <= set(files)
    assert "](previews/merge.jpg)" in card and f'load_dataset("{REPO}", "merge"' in card
    assert TOKEN not in card and all(TOKEN.encode() not in v for v in files.values())


def test_pushing_the_same_version_again_sends_nothing(hub, built, tmp_path):
    manifest, out = fresh_copy(built, tmp_path)
    push(manifest, build_dir=out, progress=False)
    hub.reset_counts()
    [again] = push(manifest, build_dir=out, progress=False)
    assert not again.uploaded
    assert hub.counts.get("lfs_put", 0) == 0 and hub.counts.get("commit", 0) == 0


def test_an_interrupted_push_resumes_without_resending(hub, built, tmp_path):
    manifest, out = fresh_copy(built, tmp_path)
    hub.fail_after("lfs_put", 2, status=507)  # the third object upload fails: no commit, no tag
    with pytest.raises(Exception):
        push(manifest, build_dir=out, progress=False)
    stored = set(hub.lfs_objects(REPO))
    assert len(stored) >= 2 and TAG not in hub.tags(REPO)
    hub.clear_failures()
    hub.reset_counts()
    [result] = push(manifest, build_dir=out, progress=False)
    assert result.uploaded and hub.tags(REPO)[TAG] == result.commit
    sent = [path.rsplit("/", 1)[-1].split("?")[0] for kind, method, path, status in hub.requests if kind == "lfs_put"]
    assert sent and not stored & set(sent)  # only the objects the first run had not stored
    lfs = hub.lfs_files(REPO, TAG)
    assert len(lfs) == len(stored) + len(sent)


def test_a_tag_with_other_content_stops_before_any_upload(hub, built, tmp_path):
    manifest, out = fresh_copy(built, tmp_path)
    push(manifest, build_dir=out, progress=False)
    report = tmp_path / "report.json"
    report.write_text('{"model": "m", "metric": "f1", "datasets": []}')
    changed = tmp_path / "changed.yaml"
    changed.write_text(manifest.read_text() + f"    results: [{report}]\n")
    hub.reset_counts()
    with pytest.raises(PublishError, match=f"already has tag {TAG} with different content"):
        push(changed, build_dir=out, progress=False)
    assert hub.counts.get("lfs_put", 0) == 0 and hub.counts.get("commit", 0) == 0
    assert hub.counts.get("preupload", 0) == 0


def test_a_refused_token_stops_before_anything(hub, built, tmp_path, monkeypatch, capsys):
    manifest, out = fresh_copy(built, tmp_path)
    monkeypatch.setenv("HF_TOKEN", "hf_wrong_secret")
    assert cli(["push", str(manifest), "--build-dir", str(out), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "token was refused" in err and "hf_wrong_secret" not in err
    assert hub.counts.get("create_repo", 0) == 0 and hub.counts.get("lfs_put", 0) == 0


def test_cli_push_prints_the_tag_and_how_to_load(hub, built, tmp_path, capsys):
    manifest, out = fresh_copy(built, tmp_path)
    assert cli(["push", str(manifest), "--build-dir", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert f"{REPO} {TAG}: uploaded, commit {hub.tags(REPO)[TAG]}" in text
    assert f"revision='{TAG}'" in text and TOKEN not in text
