"""The test Hub server (tests/hub_server.py) against the real huggingface_hub and datasets clients.

No mocks: HfApi, hf_hub_download, HfFileSystem and datasets.load_dataset talk HTTP to a
HubServer on 127.0.0.1, with offline mode switched off for the duration of each test.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

pytest.importorskip("huggingface_hub")
datasets = pytest.importorskip("datasets")

from hub_server import HubServer, hub_environment  # noqa: E402
from huggingface_hub import HfApi, HfFileSystem, hf_hub_download  # noqa: E402
from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError, RevisionNotFoundError  # noqa: E402

TOKEN = "hf_test"

README = """---
configs:
- config_name: cfg
  data_files:
  - split: test
    path: data/cfg/*.parquet
---

# A test dataset
"""


@pytest.fixture
def hub():
    """A fresh server, with huggingface_hub / datasets pointed at it and online; restored after."""
    with HubServer() as server, hub_environment(server.url):
        yield server
    assert not server.errors, "\n".join(server.errors)


@pytest.fixture
def api(hub):
    return HfApi(endpoint=hub.url, token=TOKEN)


@pytest.fixture
def repo_id(api):
    rid = f"tester/ds-{uuid.uuid4().hex[:8]}"
    api.create_repo(rid, repo_type="dataset")
    return rid


def rows_for(tag: str, n: int = 5, start: int = 0) -> dict:
    return {
        "id": [f"{tag}-{i}" for i in range(start, start + n)],
        "text": [f"{tag} document number {i}" for i in range(start, start + n)],
        "label": [i % 3 for i in range(start, start + n)],
    }


def make_folder(root: Path, tag: str, shards: int = 1, n: int = 5) -> dict:
    """A built-dataset-like folder: README.md with `configs:`, parquet shard(s), a small json."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text(README + f"\nbuild {tag}\n")
    (root / "dogood_build.json").write_text('{"tag": "%s"}\n' % tag)
    out = root / "data" / "cfg"
    out.mkdir(parents=True, exist_ok=True)
    all_rows = {"id": [], "text": [], "label": []}
    for s in range(shards):
        rows = rows_for(tag, n, start=s * n)
        datasets.Dataset.from_dict(rows).to_parquet(str(out / f"test-{s:05d}-of-{shards:05d}.parquet"))
        for k in all_rows:
            all_rows[k].extend(rows[k])
    return all_rows


def folder_files(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def upload(api, repo_id, folder, **kw):
    return api.upload_folder(repo_id=repo_id, folder_path=str(folder), repo_type="dataset", **kw)


def load_rows(repo_id, revision, **kw) -> dict:
    ds = datasets.load_dataset(repo_id, "cfg", revision=revision, split="test", **kw)
    if kw.get("streaming"):
        got = {"id": [], "text": [], "label": []}
        for row in ds:
            for k in got:
                got[k].append(row[k])
        return got
    return ds.to_dict()


# --------------------------------------------------------------------------- (a) create_repo


def test_create_repo_twice_with_exist_ok(hub, api):
    url = api.create_repo("tester/twice", repo_type="dataset")
    assert url.repo_id == "tester/twice" and url.repo_type == "dataset"
    again = api.create_repo("tester/twice", repo_type="dataset", exist_ok=True)
    assert again.repo_id == "tester/twice"
    with pytest.raises(HfHubHTTPError) as err:
        api.create_repo("tester/twice", repo_type="dataset")
    assert err.value.response.status_code == 409
    assert hub.counts["create_repo"] == 3
    # a new repo holds one commit with .gitattributes, like the Hub
    assert list(hub.files("tester/twice")) == [".gitattributes"]
    assert api.whoami()["name"] == "tester"


def test_model_repo_upload_file_and_download(hub, api, tmp_path):
    url = api.create_repo("tester/model", exist_ok=True)
    assert url.repo_type == "model"
    api.upload_file(path_or_fileobj=b"\x00weights" * 100, path_in_repo="w.bin", repo_id="tester/model")
    api.upload_file(path_or_fileobj=b"{}", path_in_repo="config.json", repo_id="tester/model")
    assert hub.lfs_files("tester/model", repo_type="model") == {
        "w.bin": __import__("hashlib").sha256(b"\x00weights" * 100).hexdigest()
    }
    got = hf_hub_download("tester/model", "w.bin", cache_dir=tmp_path)
    assert Path(got).read_bytes() == b"\x00weights" * 100
    assert [s.rfilename for s in api.model_info("tester/model").siblings] == [".gitattributes", "config.json", "w.bin"]


# --------------------------------------------------------------------------- (b) round trip


def test_upload_tag_and_load_back(hub, api, repo_id, tmp_path):
    folder = tmp_path / "built"
    rows = make_folder(folder, "one")
    info = upload(api, repo_id, folder, commit_message="Build one")
    api.create_tag(repo_id, tag="v1.0.0", repo_type="dataset")

    # server state: every file, parquet as LFS, README regular
    at_tag = hub.files(repo_id, "v1.0.0")
    assert at_tag == {".gitattributes": at_tag[".gitattributes"], **folder_files(folder)}
    assert list(hub.lfs_files(repo_id, "v1.0.0")) == ["data/cfg/test-00000-of-00001.parquet"]
    assert hub.tags(repo_id) == {"v1.0.0": info.oid}
    assert hub.counts["lfs_put"] == 1 and hub.counts["commit"] == 1

    # the tag resolves to the commit
    refs = api.list_repo_refs(repo_id, repo_type="dataset")
    assert [(t.name, t.target_commit) for t in refs.tags] == [("v1.0.0", info.oid)]
    assert [(b.name, b.target_commit) for b in refs.branches] == [("main", info.oid)]
    assert api.dataset_info(repo_id, revision="v1.0.0").sha == info.oid
    assert api.dataset_info(repo_id).card_data.configs[0]["config_name"] == "cfg"

    # hf_hub_download at the tag gives the bytes (LFS and regular files)
    for name in ("data/cfg/test-00000-of-00001.parquet", "README.md"):
        path = hf_hub_download(repo_id, name, repo_type="dataset", revision="v1.0.0", cache_dir=tmp_path / "c")
        assert Path(path).read_bytes() == (folder / name).read_bytes()
        assert f"/snapshots/{info.oid}/" in Path(path).as_posix()  # cached under the tag's commit

    # datasets.load_dataset through the server
    assert load_rows(repo_id, "v1.0.0") == rows
    # streaming reads the parquet through HfFileSystem
    assert load_rows(repo_id, "v1.0.0", streaming=True) == rows


def test_listing_and_range_reads(hub, api, repo_id, tmp_path):
    import pyarrow.parquet as pq

    folder = tmp_path / "built"
    rows = make_folder(folder, "ranges", shards=2)
    upload(api, repo_id, folder)

    tree = {f.path for f in api.list_repo_tree(repo_id, repo_type="dataset", recursive=True)}
    assert tree == {".gitattributes", "README.md", "dogood_build.json", "data", "data/cfg",
                    "data/cfg/test-00000-of-00002.parquet", "data/cfg/test-00001-of-00002.parquet"}
    top = {f.path for f in api.list_repo_tree(repo_id, repo_type="dataset")}
    assert top == {".gitattributes", "README.md", "dogood_build.json", "data"}
    expanded = list(api.list_repo_tree(repo_id, "data/cfg", repo_type="dataset", expand=True))
    assert all(f.last_commit is not None and f.lfs is not None for f in expanded)
    with pytest.raises(EntryNotFoundError):
        list(api.list_repo_tree(repo_id, "nope", repo_type="dataset"))
    with pytest.raises(RevisionNotFoundError):
        api.dataset_info(repo_id, revision="v9")
    infos = api.get_paths_info(repo_id, ["README.md", "data", "missing"], repo_type="dataset")
    assert [i.path for i in infos] == ["README.md", "data"]
    assert api.file_exists(repo_id, "README.md", repo_type="dataset")
    assert not api.file_exists(repo_id, "nope.md", repo_type="dataset")

    fs = HfFileSystem(endpoint=hub.url)
    shard = f"datasets/{repo_id}/data/cfg/test-00001-of-00002.parquet"
    assert fs.info(shard)["size"] == (folder / "data/cfg/test-00001-of-00002.parquet").stat().st_size
    hub.reset_counts()
    with fs.open(shard, "rb", block_size=256) as f:
        table = pq.read_table(f)
    assert table.to_pydict() == {k: v[5:] for k, v in rows.items()}
    assert any(kind == "resolve" and status == 206 for kind, _, _, status in hub.requests)
    assert fs.glob(f"datasets/{repo_id}/data/cfg/*.parquet") == [
        f"datasets/{repo_id}/data/cfg/test-0000{i}-of-00002.parquet" for i in range(2)
    ]


# --------------------------------------------------------------------------- (c) re-upload


def test_second_upload_sends_no_lfs_object(hub, api, repo_id, tmp_path):
    folder = tmp_path / "built"
    make_folder(folder, "same", shards=3)
    upload(api, repo_id, folder)
    assert hub.counts["lfs_put"] == 3
    head = hub.resolve(repo_id)

    hub.reset_counts()
    upload(api, repo_id, folder)
    assert hub.counts["lfs_batch"] == 1  # asked...
    assert hub.counts["lfs_put"] == 0  # ...and told every object is already there
    assert hub.counts["commit"] == 0  # nothing changed: the client skips the empty commit
    assert hub.resolve(repo_id) == head

    # only the README changes: a commit, still no LFS upload
    (folder / "README.md").write_text(README + "\nedited\n")
    hub.reset_counts()
    upload(api, repo_id, folder)
    assert hub.counts["lfs_put"] == 0 and hub.counts["commit"] == 1
    assert hub.files(repo_id)["README.md"] == (folder / "README.md").read_bytes()


# --------------------------------------------------------------------------- (d) interrupted upload


def test_interrupted_upload_resumes_with_missing_objects_only(hub, api, repo_id, tmp_path):
    folder = tmp_path / "built"
    make_folder(folder, "resume", shards=4)
    oids = {p: hub_sha for p, hub_sha in _sha256s(folder).items() if p.endswith(".parquet")}

    hub.fail_after("lfs_put", 1, status=507)  # 507: not retried by the client
    with pytest.raises((RuntimeError, HfHubHTTPError)):
        upload(api, repo_id, folder)
    # The first PUT got through; the client may cancel uploads not yet started once one fails
    # (concurrent.futures' map), so 2 to 4 PUTs were tried.
    assert 2 <= hub.counts["lfs_put"] <= 4
    stored = hub.lfs_objects(repo_id)
    assert len(stored) == 1 and stored <= set(oids.values())
    assert hub.counts["commit"] == 0
    assert list(hub.files(repo_id)) == [".gitattributes"]

    hub.clear_failures()
    hub.reset_counts()
    upload(api, repo_id, folder)
    put_oids = {path.split("?")[0].rsplit("/", 1)[-1] for kind, _, path, _ in hub.requests if kind == "lfs_put"}
    assert hub.counts["lfs_put"] == 3
    assert put_oids == set(oids.values()) - stored
    assert hub.counts["commit"] == 1
    files = hub.files(repo_id)
    assert {p: files[p] for p in folder_files(folder)} == folder_files(folder)


def test_transient_server_error_is_retried_by_the_client(hub, api, repo_id, tmp_path):
    folder = tmp_path / "built"
    make_folder(folder, "transient", shards=1)
    hub.fail_after("lfs_put", 0, status=500, times=1)  # huggingface_hub's http_backoff retries a 500
    upload(api, repo_id, folder)
    assert hub.counts["lfs_put"] == 2
    assert [s for k, _, _, s in hub.requests if k == "lfs_put"] == [500, 200]
    assert hub.counts["commit"] == 1


def _sha256s(folder: Path) -> dict:
    import hashlib

    return {p: hashlib.sha256(b).hexdigest() for p, b in folder_files(folder).items()}


# --------------------------------------------------------------------------- (e) tokens


@pytest.mark.parametrize("token", [False, "hf_not_a_token"], ids=["no-token", "bad-token"])
def test_writes_need_a_valid_token(hub, repo_id, tmp_path, token):
    api = HfApi(endpoint=hub.url, token=token)
    with pytest.raises(HfHubHTTPError) as err:
        api.create_repo("tester/other", repo_type="dataset")
    assert err.value.response.status_code == 401

    folder = tmp_path / "built"
    make_folder(folder, "denied")
    with pytest.raises(HfHubHTTPError) as err:
        upload(api, repo_id, folder)
    assert err.value.response.status_code == 401
    with pytest.raises(HfHubHTTPError) as err:
        api.create_tag(repo_id, tag="v0", repo_type="dataset")
    assert err.value.response.status_code == 401
    assert hub.lfs_objects(repo_id) == set() and hub.tags(repo_id) == {}
    assert list(hub.files(repo_id)) == [".gitattributes"]
    if token:
        with pytest.raises(Exception) as err:
            api.whoami()
        assert err.value.response.status_code == 401


# --------------------------------------------------------------------------- (f) tags are frozen


def test_new_commit_on_main_leaves_the_tag_alone(hub, api, repo_id, tmp_path):
    old = make_folder(tmp_path / "v1", "old", shards=2)
    first = upload(api, repo_id, tmp_path / "v1")
    api.create_tag(repo_id, tag="v1.0.0", repo_type="dataset")
    with pytest.raises(HfHubHTTPError) as err:
        api.create_tag(repo_id, tag="v1.0.0", repo_type="dataset")
    assert err.value.response.status_code == 409
    api.create_tag(repo_id, tag="v1.0.0", repo_type="dataset", exist_ok=True)
    assert load_rows(repo_id, "v1.0.0") == old

    new = make_folder(tmp_path / "v2", "new", shards=2, n=3)
    second = upload(api, repo_id, tmp_path / "v2")
    assert second.oid != first.oid
    assert hub.resolve(repo_id, "main") == second.oid
    assert hub.resolve(repo_id, "v1.0.0") == first.oid

    assert load_rows(repo_id, "main") == new
    assert load_rows(repo_id, "v1.0.0") == old
    assert load_rows(repo_id, first.oid) == old
    name = "data/cfg/test-00000-of-00002.parquet"
    got = hf_hub_download(repo_id, name, repo_type="dataset", revision="v1.0.0", cache_dir=tmp_path / "c")
    assert Path(got).read_bytes() == (tmp_path / "v1" / name).read_bytes()
    commits = api.list_repo_commits(repo_id, repo_type="dataset")
    assert [c.commit_id for c in commits][:2] == [second.oid, first.oid]

    api.delete_tag(repo_id, tag="v1.0.0", repo_type="dataset")
    assert api.list_repo_refs(repo_id, repo_type="dataset").tags == []


def test_parent_commit_mismatch_is_refused(hub, api, repo_id, tmp_path):
    from huggingface_hub import CommitOperationAdd

    base = hub.resolve(repo_id)
    api.create_commit(repo_id, [CommitOperationAdd("a.txt", b"a")], commit_message="a", repo_type="dataset",
                      parent_commit=base)
    with pytest.raises(HfHubHTTPError) as err:
        api.create_commit(repo_id, [CommitOperationAdd("b.txt", b"b")], commit_message="b", repo_type="dataset",
                          parent_commit=base)
    assert err.value.response.status_code == 412
    assert sorted(hub.files(repo_id)) == [".gitattributes", "a.txt"]
