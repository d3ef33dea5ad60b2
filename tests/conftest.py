"""Shared fixtures: where the real data is, and an isolated cache per test session.

The data folder is ``$DOGOOD_DATA_DIR``, else ``../shared/data`` beside the
repository. Tests that need it are skipped when it is missing, except in CI
(``CI`` set), where a missing data folder is an error.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# Hugging Face libraries read these when first imported (before any fixture
# runs): offline, with a cache of the test run's own, never the user's.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="dogood-test-hf-")

REPO = Path(__file__).resolve().parents[1]
# Paths given relative to where pytest was started (the README's `DOGOOD_DATA_DIR=../shared/data`) become
# absolute now, before any test module reads them: every test runs in a working directory of its own.
for _name in ("DOGOOD_DATA_DIR", "NLTK_DATA", "DOGOOD_CACHE", "DOGOOD_FONT_DIR"):
    if os.environ.get(_name):
        os.environ[_name] = os.pathsep.join(str(Path(p).resolve()) if p else p
                                            for p in os.environ[_name].split(os.pathsep))
DATA = Path(os.environ.get("DOGOOD_DATA_DIR") or REPO.parent / "shared" / "data").resolve()
FUNSD_DIR = DATA / "funsd" / "dataset"


def pytest_configure(config):
    if os.environ.get("CI") and not FUNSD_DIR.is_dir():
        raise pytest.UsageError(f"CI is set but the shared data is missing: {FUNSD_DIR}")


@pytest.fixture(scope="session", autouse=True)
def _isolated_environment(tmp_path_factory):
    """Keep Hugging Face and dogood caches out of the user's home; never reach the network."""
    base = tmp_path_factory.mktemp("env")
    saved = {k: os.environ.get(k) for k in ("HF_HOME", "HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE", "DOGOOD_CACHE", "DOGOOD_DATA_DIR")}
    os.environ["HF_HOME"] = str(base / "hf")
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["DOGOOD_CACHE"] = str(base / "dogood-cache")
    if DATA.is_dir():
        os.environ["DOGOOD_DATA_DIR"] = str(DATA)
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(autouse=True)
def _own_working_directory(tmp_path_factory, monkeypatch):
    """Every test runs in an empty folder of its own: what a previous command left in the clone (say the
    README's `out/funsd-l`, or a `./recipes` folder) cannot change its outcome, and it leaves nothing there."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


class GoldScorer:
    """A token "model" that predicts every document's gold tags: to `move`, every entity is strong."""

    name, task = "gold", "token"

    def predict(self, docs):
        from dogood.core.schema import iob_tags
        from dogood.models import Prediction

        out = {}
        for d in docs:
            tags = tuple(iob_tags(d)[1])
            out[d.id] = Prediction(d.id, tags=tags, confidences=(1.0,) * len(tags))
        return out


@pytest.fixture(scope="session")
def gold_scorer() -> GoldScorer:
    return GoldScorer()


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not DATA.is_dir():
        pytest.skip(f"shared data not found at {DATA} (set DOGOOD_DATA_DIR)")
    return DATA


@pytest.fixture(scope="session")
def funsd_dir(data_dir) -> Path:
    if not FUNSD_DIR.is_dir():
        pytest.skip(f"FUNSD not found at {FUNSD_DIR}")
    return FUNSD_DIR


@pytest.fixture(scope="session")
def funsd_test(funsd_dir):
    from dogood.sources.funsd import FunsdSource

    return FunsdSource(root=funsd_dir, split="test")


@pytest.fixture(scope="session")
def funsd_train(funsd_dir):
    from dogood.sources.funsd import FunsdSource

    return FunsdSource(root=funsd_dir, split="train")


@pytest.fixture(scope="session")
def trained_baseline(funsd_train, tmp_path_factory):
    """dogood's CRF baseline trained on all of FUNSD train, saved and loaded back.

    Capped at 80 L-BFGS iterations (a few seconds on 2 cores; FUNSD test entity
    F1 about 0.71, as with the default 200). The saved file is at ``.source``.
    """
    from dogood.models.baseline import BaselineTagger, train_baseline

    docs = [funsd_train.load(i) for i in funsd_train.ids()]
    model = train_baseline(docs, max_iterations=80)
    path = model.save(tmp_path_factory.mktemp("baseline") / "funsd-baseline.dogood-model")
    return BaselineTagger.load(path)


@pytest.fixture(scope="session")
def document_baseline():
    """dogood's document baseline trained once per test session on 160 synthetic train pages (RVL-CDIP's 16
    classes): every test that needs a trained page classifier shares it."""
    from dogood.models.doc_baseline import train_document_baseline
    from dogood.sources.synthetic import SyntheticSource

    source = SyntheticSource(pages=160, split="train")
    return train_document_baseline(source.load(i) for i in source.ids())


@pytest.fixture
def copy_funsd_forms(funsd_dir):
    """``copy(dest, n=4)``: the first ``n`` forms of each FUNSD split, copied in the official layout under ``dest``."""
    import shutil

    def copy(dest: Path, n: int = 4) -> Path:
        for sub in ("training_data", "testing_data"):
            for kind in ("images", "annotations"):
                (dest / sub / kind).mkdir(parents=True)
            for ann in sorted((funsd_dir / sub / "annotations").glob("*.json"))[:n]:
                shutil.copy(ann, dest / sub / "annotations")
                shutil.copy(funsd_dir / sub / "images" / f"{ann.stem}.png", dest / sub / "images")
        return dest

    return copy


@pytest.fixture(scope="session")
def tiny_mlm(tmp_path_factory):
    """A 1-layer BERT with random weights and a small WordPiece vocabulary (no download)."""
    import string

    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    from dogood.language.lexicons import stopwords as english_stopwords

    try:
        stop = sorted(english_stopwords())
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"NLTK stopwords missing (set NLTK_DATA): {exc}")
    letters = sorted(set(string.ascii_lowercase + string.digits + string.punctuation))
    whole = ["report", "research", "tobacco", "date", "name", "company", "address", "city", "form", "paper"]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + stop + whole + letters + ["##" + c for c in letters]
    vocab = list(dict.fromkeys(vocab))
    folder = tmp_path_factory.mktemp("tiny-mlm")
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), model_max_length=64)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64)
    BertForMaskedLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def tagger():
    """dogood's part-of-speech tagger module (:mod:`dogood.language.pos_tagger`, the ``pos`` extra's model);
    skipped when missing, except on CI."""
    from dogood.core.errors import SourceError
    from dogood.language import pos_tagger

    try:
        pos_tagger.tagger()
    except SourceError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(exc))
    return pos_tagger


class BoundedRun:
    """What :func:`bounded_run` gives back: the exit code, stderr, and the child's peak resident memory."""

    def __init__(self, code: int, err: str, peak_mib: float):
        self.code, self.err, self.peak_mib = code, err, peak_mib

    @property
    def last_line(self) -> str:
        lines = [ln for ln in self.err.strip().splitlines() if not ln.startswith("PEAK_RSS_MIB ")]
        return lines[-1] if lines else ""


@pytest.fixture
def bounded_run(tmp_path):
    """``run(code, address_space_mib=6144)``: run Python ``code`` in a child process (this test's environment,
    its working directory ``tmp_path``) under an address-space limit, so a reader that would allocate without
    bound fails there instead of taking the machine; returns a :class:`BoundedRun` with the child's peak
    resident memory (``VmHWM`` of ``/proc/self/status``: Linux), measured in the child as it exits."""
    import subprocess
    import sys
    import textwrap

    def run(code: str, address_space_mib: int = 6144, timeout: float = 300) -> BoundedRun:
        wrapper = textwrap.dedent(f"""
            import resource, sys
            limit = {address_space_mib} << 20
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            try:
                exec(compile({code!r}, "<bounded>", "exec"))
            finally:
                # VmHWM: this process's own peak (ru_maxrss keeps the forking parent's across exec)
                with open("/proc/self/status", encoding="ascii") as fh:
                    peak = next(int(ln.split()[1]) for ln in fh if ln.startswith("VmHWM:"))
                print(f"PEAK_RSS_MIB {{peak / 1024:.1f}}", file=sys.stderr, flush=True)
            """)
        proc = subprocess.run([sys.executable, "-c", wrapper], cwd=tmp_path, capture_output=True, text=True,
                              timeout=timeout)
        peaks = [float(ln.split()[1]) for ln in proc.stderr.splitlines() if ln.startswith("PEAK_RSS_MIB ")]
        return BoundedRun(proc.returncode, proc.stderr, peaks[-1] if peaks else float("nan"))

    return run
@pytest.fixture(scope="session")
def docvqa_root(funsd_test, tmp_path_factory):
    """A DocVQA-format split made from the first 3 FUNSD test pages: OCR files from FUNSD's words, questions from its
    links."""
    import json
    import shutil

    root = tmp_path_factory.mktemp("docvqa")
    split = root / "val"
    (split / "documents").mkdir(parents=True)
    (split / "ocr_results").mkdir()
    entries, qid = [], 1000
    for doc_id in funsd_test.ids()[:3]:
        doc = funsd_test.load(doc_id)
        shutil.copy(doc.source if doc.source.endswith(".png") else doc.image.path, split / "documents" / f"{doc_id}.png")
        words = [{"boundingBox": [x0, y0, x1, y0, x1, y1, x0, y1], "text": w.text}
                 for w in doc.words if w.text.strip() for x0, y0, x1, y1 in [w.box]]
        ocr = {"status": "Succeeded", "recognitionResults": [
            {"page": 1, "width": doc.width, "height": doc.height, "unit": "pixel", "lines": [{"words": words}]}]}
        (split / "ocr_results" / f"{doc_id}.json").write_text(json.dumps(ocr))
        by_id = {e.id: e for e in doc.entities}
        for ent in doc.entities:
            for a, b in ent.links:
                if a == ent.id and ent.label == "question" and by_id[b].label == "answer" and doc.entity_text(by_id[b]).strip():
                    entries.append({"questionId": qid, "question": f"What is the {doc.entity_text(ent).rstrip(':')}?",
                                    "image": f"documents/{doc_id}.png", "answers": [doc.entity_text(by_id[b])]})
                    qid += 1
    (split / "val_v1.0.json").write_text(json.dumps({"dataset_name": "docvqa", "data": entries}))
    return root
