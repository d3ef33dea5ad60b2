"""``--ray`` without a shared disk: a 2-node local Ray cluster (``ray.cluster_utils.Cluster``), each node with its
own temporary folder, reading the source over HTTP from the test Hub server (``hf`` source, ``streaming: true``).

The build must be byte-identical to a local build of the same recipe, and resume after a failure as a local build
does. Kept small (one CPU per node, an 80 MB object store per node (Ray's least), 8 documents) so that it runs in CI.
"""

from __future__ import annotations

import os
import pickle
import sys
import threading
import uuid
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("huggingface_hub")

from hub_server import HubServer, hub_environment  # noqa: E402
from huggingface_hub import HfApi  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

from dogood.core.errors import DogoodError  # noqa: E402
from dogood.pipeline.build import build  # noqa: E402
from dogood.pipeline.recipe import load_recipe, parse_recipe  # noqa: E402
from dogood.shifts import params  # noqa: E402
from dogood.shifts.base import Shift  # noqa: E402
from dogood.sources.hf_dataset import HFDatasetSource  # noqa: E402

DOCS = 8
NODE_ENV = "DOGOOD_TEST_NODE"  # set on each node of the cluster (its own folder); unset in this process


class NodeMark(Shift):
    """Leaves each document unchanged; on a cluster node, notes which node read it and that the node prepared.

    ``prepare`` holds a lock, which cannot be pickled: a spec that shipped the driver's prepared state to the
    actors would fail to serialise, and an actor that did not prepare itself fails in ``apply``.
    """

    name = "test_node_mark"
    family = "layout"

    class Params(params.Params):
        fail_if: params.Text = ""  # "flag:<file>": while the file exists, document fail_doc fails (not a path value,
        # which records would show by its content: the failing run and its resume must share their steps)
        fail_doc: params.Text = ""

    def prepare(self):
        self._model = threading.Lock()  # stands for a model: it must not travel
        node = os.environ.get(NODE_ENV)
        if node:
            (Path(node) / f"prepared-{os.getpid()}").touch()

    def apply(self, doc, rng):
        if not hasattr(self, "_model"):
            raise RuntimeError("not prepared in this process")
        if self.fail_if and Path(self.fail_if.removeprefix("flag:")).exists() and doc.id == self.fail_doc:
            raise ValueError("told to fail")
        node = os.environ.get(NODE_ENV)
        if node:
            (Path(node) / "seen").mkdir(exist_ok=True)
            (Path(node) / "seen" / doc.id).touch()
        return doc


@pytest.fixture(scope="module")
def hub():
    with HubServer() as server, hub_environment(server.url):
        yield server


@pytest.fixture(scope="module")
def source_repo(hub, funsd_dir, tmp_path_factory):
    """A FUNSD-style dataset on the test Hub (a dogood build of 8 FUNSD test forms, 3 Parquet files)."""
    folder = tmp_path_factory.mktemp("src") / "funsd-src"
    recipe = parse_recipe({"name": "funsd-src", "version": "1.0.0", "source": {"kind": "funsd"}, "splits": ["test"],
                           "seed": 0, "shard_size": 3, "configs": {"orig": []}})
    build(recipe, folder, source_path=funsd_dir, limit=DOCS, progress=False)
    repo_id = f"tester/funsd-{uuid.uuid4().hex[:8]}"
    api = HfApi(endpoint=hub.url, token="hf_test")
    api.create_repo(repo_id, repo_type="dataset")
    api.upload_folder(repo_id=repo_id, folder_path=str(folder), repo_type="dataset")
    return repo_id


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """Two nodes of one CPU, each with its own folder (``TMPDIR`` and :data:`NODE_ENV`); the driver joins it."""
    if ray.is_initialized():
        ray.shutdown()
    nodes = [tmp_path_factory.mktemp(f"node{i}") for i in range(2)]
    for node in nodes:
        (node / "tmp").mkdir()

    def node_args(node):
        return {"num_cpus": 1, "object_store_memory": 80 * 1024**2, "include_dashboard": False,
                "env_vars": {NODE_ENV: str(node), "TMPDIR": str(node / "tmp")}}

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    c = Cluster(initialize_head=True, head_node_args=node_args(nodes[0]))
    c.add_node(**node_args(nodes[1]))
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the nodes cannot import this test module
    assert len([n for n in ray.nodes() if n["Alive"]]) == 2
    yield c, nodes
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    ray.shutdown()
    c.shutdown()


def _recipe(repo_id: str, flag: Path, fail_doc: str):
    """Three configs, each marking the pages its node reads: the actors may take a shard's configs in groups."""
    mark = {"shift": "test_node_mark", "fail_if": f"flag:{flag}", "fail_doc": fail_doc}
    configs = {"merge": [mark, *load_recipe("funsd-l").configs["merge"]],
               "distort": [mark, *load_recipe("funsd-i").configs["distort"]], "mark": [mark]}
    return parse_recipe({"name": "funsd-cluster", "version": "1.0.0", "splits": ["test"], "seed": 0,
                         "shard_size": 2, "source": {"kind": "hf", "name": repo_id, "config": "orig",
                                                     "streaming": True},
                         "configs": configs})


def _files(folder: Path) -> dict[Path, bytes]:
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_streaming_source_reads_the_same_documents_as_a_download(hub, source_repo):
    streamed = HFDatasetSource(source_repo, split="test", config="orig", streaming=True)
    loaded = HFDatasetSource(source_repo, split="test", config="orig")
    assert not Path(source_repo).exists()  # a Hub id, no local path
    assert streamed.ids() == loaded.ids() and len(streamed.ids()) == DOCS
    assert len(streamed._rows.files) == 3  # the 3 Parquet files, read in place over HTTP
    assert list(streamed.read_slice(2, 7)) == [loaded.load(i) for i in loaded.ids()[2:7]]
    assert streamed.load(streamed.ids()[5]) == loaded.load(loaded.ids()[5])
    again = pickle.loads(pickle.dumps(streamed))  # what an actor receives: no open file, no row
    assert set(vars(again._rows)) == {"location", "columns", "fs", "files", "ids", "stamps"}  # stamps: sizes, times
    assert list(again.read_slice(0, DOCS)) == [loaded.load(i) for i in loaded.ids()]


def test_two_node_build_is_byte_identical_to_a_local_build_and_resumes(hub, source_repo, cluster, tmp_path):
    _cluster, nodes = cluster
    flag = tmp_path / "fail-now"
    ids = HFDatasetSource(source_repo, split="test", config="orig", streaming=True).ids()
    recipe = _recipe(source_repo, flag, fail_doc=ids[-1])
    local, remote = tmp_path / "local" / "out", tmp_path / "ray" / "out"  # same folder name: the card names it
    build(recipe, local, progress=False)

    flag.touch()  # the last document fails: the build stops, keeping the shards it finished
    with pytest.raises(DogoodError, match="told to fail"):
        build(recipe, remote, progress=False, ray=_cluster.address, num_proc=2)
    assert not remote.exists()
    flag.unlink()
    report = build(recipe, remote, progress=False, ray=_cluster.address, num_proc=2)
    assert report.reused_shards >= 1 and report.documents == {"test": DOCS}

    a, b = _files(local), _files(remote)
    assert list(a) == list(b) and sum(p.suffix == ".parquet" for p in a) == 3 * 4  # 3 configs x 4 shards
    for rel in a:
        assert a[rel] == b[rel], rel
    distorted = [a[p] for p in a if p.parts[:2] == ("data", "distort")]
    assert distorted != [a[p] for p in a if p.parts[:2] == ("data", "mark")]  # the image shift changed bytes

    seen = [{p.name for p in (node / "seen").iterdir()} if (node / "seen").exists() else set() for node in nodes]
    assert all(seen) and set.union(*seen) == set(ids)  # both nodes read documents
    assert all(any(node.glob("prepared-*")) for node in nodes)  # each node's actor prepared the chain itself
    left = [p for node in nodes for p in (node / "tmp").rglob("*") if "dogood-ray-" in str(p)]
    assert not left  # the actors removed their shard files
