"""Counter-fitted word vectors and their nearest neighbours, for the embedding word swap.

Do-GOOD's "Word Swap by embedding" (He et al. 2023, section 3.2; Table 4,
"Embedding") is TextAttack's ``WordSwapEmbedding`` (Morris et al. 2020), which
swaps a word for one of its nearest neighbours in the counter-fitted vectors of
Mrkšić et al. 2016 ("Counter-fitting Word Vectors to Linguistic Constraints").
TextAttack downloads those vectors (``paragramcf``, 300-d) from its own
storage; where that is reachable, ``embedding="paragramcf"`` uses them. Offline
(CI, this project's machines) dogood builds the equivalent once from the
shared GloVe 6B 50-d top-50k vectors (``$DOGOOD_DATA_DIR/glove``) and the
published linguistic constraints (``$DOGOOD_DATA_DIR/counter_fitting``: PPDB
synonyms, PPDB and WordNet antonyms) and caches it under
``<cache>/embeddings/``, keyed by a hash of the input files and parameters.

Counter-fitting is written here with numpy because no maintained library
ships it (the authors' script is Python 2 and loops over pairs in Python).
:func:`counter_fit` runs the published objective, full batch, vectorised:

* antonym repel: push antonyms apart while their cosine distance is below
  ``delta`` (1.0);
* synonym attract: pull synonyms together while their distance is above
  ``gamma`` (0.0);
* vector space preservation: a word and each original neighbour within
  cosine distance ``rho`` (0.2) are pulled back when they drift further
  apart than they were,

each term weighted by ``k1``, ``k2``, ``k3`` (0.1 each, the authors'
configuration); a word's update is the sum of its active terms' gradients
divided by their number, and vectors are renormalised after each of the 20
steps, as in the authors' procedure. Synonym and neighbour pairs that are
also antonyms are dropped.

The vocabulary is GloVe's most frequent ``vocab_size`` rows (all 50,000 by
default) that are plain lowercase words of two letters or more (inner ``'``
or ``-`` allowed): numbers, punctuation and single letters are left to other
shifts. The full build (45,996 words, 50 neighbours each) takes under a
minute on 2 cores and about 600 MB of memory; the cache file is 23 MB.
Results depend on floating-point summation order, so two machines with
different BLAS builds may rank near-tied neighbours differently.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tempfile
import time
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from scipy import sparse

from dogood.core import fs
from dogood.core.errors import SourceError
from dogood.core.paths import cache_dir, data_dir
from dogood.core.progress import one_time_step

GLOVE_VECTORS = "glove/glove.6B.50d.top50k.npy"
GLOVE_VOCAB = "glove/vocab.txt"
SYNONYM_FILES = ("counter_fitting/ppdb_synonyms.txt",)
ANTONYM_FILES = ("counter_fitting/ppdb_antonyms.txt", "counter_fitting/wordnet_antonyms.txt")
#: Which vocabulary words are kept: lowercase words of two letters or more, inner apostrophes or hyphens allowed.
WORD_PATTERN = re.compile(r"[a-z]{2,}(?:['-][a-z]+)*")
#: Bump when the build changes in a way that changes its output.
BUILD_VERSION = 1


@dataclass(frozen=True)
class CounterFitParams:
    """Hyperparameters of counter-fitting (Mrkšić et al. 2016; the authors' configuration)."""

    k1: float = 0.1  # antonym repel weight
    k2: float = 0.1  # synonym attract weight
    k3: float = 0.1  # vector space preservation weight
    delta: float = 1.0  # antonyms are pushed until this cosine distance
    gamma: float = 0.0  # synonyms are pulled until this cosine distance
    rho: float = 0.2  # original neighbours within this cosine distance are preserved
    epochs: int = 20


@dataclass(frozen=True, eq=False)
class WordVectors:
    """Unit-length word vectors with, optionally, each word's nearest neighbours.

    ``neighbours[i]`` lists word ``i`` itself first, then its nearest words by
    cosine similarity, closest first (the layout of TextAttack's ``nn`` matrix).
    """

    words: tuple[str, ...]
    vectors: np.ndarray
    neighbours: np.ndarray | None = None
    path: Path | None = None
    index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "index", {w: i for i, w in enumerate(self.words)})

    def __contains__(self, word: str) -> bool:
        return word in self.index

    def __len__(self) -> int:
        return len(self.words)

    def cos(self, a: str, b: str) -> float:
        """Cosine similarity of two words (both must be in the vocabulary)."""
        return float(self.vectors[self.index[a]] @ self.vectors[self.index[b]])

    def nearest(self, word: str, k: int) -> list[str]:
        """The ``k`` nearest words to ``word``, closest first (not the word itself)."""
        if self.neighbours is None:
            raise ValueError("these vectors carry no neighbour matrix")
        if k > self.neighbours.shape[1] - 1:
            raise ValueError(f"only {self.neighbours.shape[1] - 1} neighbours are stored, asked for {k}")
        return [self.words[j] for j in self.neighbours[self.index[word], 1 : k + 1]]


# -- inputs ---------------------------------------------------------------------


def _data_root(root: str | Path | None) -> Path:
    root = Path(root) if root is not None else data_dir()
    if root is None or not (root / GLOVE_VECTORS).is_file():
        where = f"{root}" if root is not None else "DOGOOD_DATA_DIR (not set)"
        raise SourceError(
            f"GloVe vectors not found under {where}: expected {GLOVE_VECTORS} and {GLOVE_VOCAB} "
            "(the project's shared data folder); or use embedding='paragramcf' to download TextAttack's vectors"
        )
    return root


def glove_vectors(vocab_size: int | None = None, *, root: str | Path | None = None) -> WordVectors:
    """GloVe 6B 50-d vectors of the vocabulary (see module docstring), unit length, no neighbours."""
    root = _data_root(root)
    try:
        matrix = fs.load_npy(root / GLOVE_VECTORS, what="GloVe vectors", dtypes="f", ndim=2)
        vocab = fs.read_text(root / GLOVE_VOCAB, what="GloVe vocabulary").split("\n")[: len(matrix)]
    except fs.FileRefused as exc:
        raise SourceError(str(exc)) from None
    limit = len(matrix) if vocab_size is None else min(int(vocab_size), len(matrix))
    keep = [i for i, w in enumerate(vocab[:limit]) if WORD_PATTERN.fullmatch(w)]
    vectors = matrix[keep].astype(np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return WordVectors(tuple(vocab[i] for i in keep), vectors)


def read_pairs(paths: Iterable[str | Path], index: dict[str, int]) -> np.ndarray:
    """Word pairs (one ``a b`` a line) as index pairs, both directions, de-duplicated, in-vocabulary only."""
    pairs = set()
    for path in paths:
        with io.TextIOWrapper(fs.open_file(path, what="word pairs file"), encoding="utf-8") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) >= 2 and parts[0] in index and parts[1] in index and parts[0] != parts[1]:
                    a, b = index[parts[0]], index[parts[1]]
                    pairs.add((a, b))
                    pairs.add((b, a))
    return np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)


# -- the algorithm ----------------------------------------------------------------


def similar_pairs(unit: np.ndarray, min_cos: float, block: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """All ordered pairs ``(i, j)``, ``i != j``, with cosine similarity >= ``min_cos``, and those similarities.

    Only the upper triangle of the similarity matrix is computed, in blocks of ``block`` rows.
    """
    rows, cols, sims = [], [], []
    for start in range(0, len(unit), block):
        sim = unit[start : start + block] @ unit[start:].T
        r, c = np.nonzero(sim >= min_cos)
        keep = r < c  # column offsets are relative to ``start`` too
        r, c = r[keep], c[keep]
        rows.append(r + start)
        cols.append(c + start)
        sims.append(sim[r, c])
    i = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    j = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
    s = np.concatenate(sims) if sims else np.zeros(0, dtype=np.float32)
    pairs = np.stack([np.concatenate([i, j]), np.concatenate([j, i])], axis=1).astype(np.int64)
    return pairs, np.concatenate([s, s])


def _drop(pairs: np.ndarray, banned: np.ndarray, n: int) -> np.ndarray:
    """``pairs`` without those that are also in ``banned``."""
    if not len(pairs) or not len(banned):
        return np.ones(len(pairs), dtype=bool)
    return ~np.isin(pairs[:, 0] * n + pairs[:, 1], banned[:, 0] * n + banned[:, 1])


def counter_fit(
    vectors: np.ndarray,
    synonyms: np.ndarray,
    antonyms: np.ndarray,
    params: CounterFitParams = CounterFitParams(),
    *,
    block: int = 512,
) -> np.ndarray:
    """Counter-fit ``vectors`` (rows, any length) to synonym and antonym index pairs; returns unit rows.

    Pairs are ``(i, j)`` rows; give both directions for a symmetric
    constraint (:func:`read_pairs` does). See the module docstring for the
    objective and the update.
    """
    n = len(vectors)
    unit = vectors.astype(np.float32)
    unit /= np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-12)
    synonyms = synonyms[_drop(synonyms, antonyms, n)]
    if params.k3 > 0:
        vsp, vsp_sim = similar_pairs(unit, 1.0 - params.rho, block)
        keep = _drop(vsp, antonyms, n)
        vsp, vsp_dist = vsp[keep], 1.0 - vsp_sim[keep]
    else:
        vsp, vsp_dist = np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=np.float32)
    pairs = np.concatenate([antonyms, synonyms, vsp]).reshape(-1, 2)
    weight = np.concatenate([
        np.full(len(antonyms), params.k1),  # gradient ascent on the distance
        np.full(len(synonyms), -params.k2),  # descent
        np.full(len(vsp), -params.k3),  # descent
    ]).astype(np.float32)
    a, b = pairs[:, 0], pairs[:, 1]
    na, ns = len(antonyms), len(synonyms)
    for _ in range(params.epochs):
        dots = np.einsum("ij,ij->i", unit[a], unit[b])
        dist = 1.0 - dots
        active = np.empty(len(pairs), dtype=bool)
        active[:na] = dist[:na] < params.delta
        active[na : na + ns] = dist[na : na + ns] > params.gamma
        active[na + ns :] = dist[na + ns :] > vsp_dist
        ia, ib, w, d = a[active], b[active], weight[active], dots[active]
        # d dist(u, v) / du for unit vectors is u (u.v) - v; each word moves by the mean of its active terms.
        count = np.bincount(ia, minlength=n).astype(np.float32)
        scale = np.bincount(ia, weights=w * d, minlength=n).astype(np.float32)
        pull = sparse.csr_matrix((w, (ia, ib)), shape=(n, n)) @ unit
        update = unit * scale[:, None] - pull
        unit = unit + update / np.maximum(count, 1.0)[:, None]
        unit /= np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-12)
    return unit.astype(np.float32)


def nearest_neighbours(unit: np.ndarray, k: int, block: int = 256) -> np.ndarray:
    """``(n, k + 1)`` int32: each row's own index, then its ``k`` nearest rows by cosine, closest first.

    Computed in blocks of ``block`` rows; ties are broken by the lower index.
    """
    n = len(unit)
    k = min(int(k), n - 1)
    out = np.empty((n, k + 1), dtype=np.int32)
    for start in range(0, n, block):
        sim = unit[start : start + block] @ unit.T
        rows = np.arange(len(sim))
        sim[rows, rows + start] = -np.inf  # the word itself goes first, separately
        top = np.argpartition(sim, n - k, axis=1)[:, n - k :] if k else np.zeros((len(sim), 0), dtype=np.int64)
        top_sim = np.take_along_axis(sim, top, axis=1)
        order = np.lexsort((top, -top_sim), axis=1)
        out[start : start + len(sim), 0] = rows + start
        out[start : start + len(sim), 1:] = np.take_along_axis(top, order, axis=1)
    return out


# -- the cached build ---------------------------------------------------------------


def _file_digest(path: Path) -> str:
    return fs.sha256_file(path)


def counter_fitted_glove(
    vocab_size: int | None = None,
    neighbours: int = 50,
    *,
    params: CounterFitParams = CounterFitParams(),
    root: str | Path | None = None,
) -> WordVectors:
    """Counter-fitted GloVe 50-d vectors with ``neighbours`` nearest neighbours each, built once and cached.

    Parameters
    ----------
    vocab_size : keep GloVe's ``vocab_size`` most frequent rows (default: all 50,000), before
        dropping non-words; a smaller vocabulary builds faster.
    neighbours : how many nearest neighbours to store per word (the most a swap can consider).
    params : counter-fitting hyperparameters.
    root : the data folder (default: ``$DOGOOD_DATA_DIR``).

    The cache file, ``<cache>/embeddings/counter-fitted-glove-50d-<key>.npz``,
    is keyed by the sha256 of every input file and of the parameters, and
    written atomically; parallel workers wait for one build.
    """
    root = _data_root(root)
    inputs = [GLOVE_VECTORS, GLOVE_VOCAB, *SYNONYM_FILES, *ANTONYM_FILES]
    missing = [p for p in inputs if not (root / p).is_file()]
    if missing:
        raise SourceError(f"counter-fitting inputs missing under {root}: {', '.join(missing)}")
    spec = {
        "version": BUILD_VERSION,
        "vocab_size": None if vocab_size is None else int(vocab_size),
        "neighbours": int(neighbours),
        "params": asdict(params),
        "inputs": {p: _file_digest(root / p) for p in inputs},
    }
    key = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]
    folder = cache_dir() / "embeddings"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"counter-fitted-glove-50d-{key}.npz"
    if path.is_file():
        return load_word_vectors(path)
    with _lock(folder / f".{path.name}.lock"):
        if path.is_file():  # built by another process while we waited
            return load_word_vectors(path)
        start = time.perf_counter()
        with one_time_step(f"building counter-fitted word vectors from GloVe 50-d and the synonym/antonym lists in "
                           f"{root}", cached_in=folder):
            glove = glove_vectors(vocab_size, root=root)
            synonyms = read_pairs([root / p for p in SYNONYM_FILES], glove.index)
            antonyms = read_pairs([root / p for p in ANTONYM_FILES], glove.index)
            fitted = counter_fit(glove.vectors, synonyms, antonyms, params)
            nn = nearest_neighbours(fitted, neighbours)
            spec["seconds"] = round(time.perf_counter() - start, 1)
            spec["words"] = len(glove.words)
            out = WordVectors(glove.words, fitted, nn, path)
            save_word_vectors(out, path, meta=spec)
    return load_word_vectors(path)


def save_word_vectors(vectors: WordVectors, path: str | Path, *, meta: dict | None = None) -> Path:
    """Write ``words``, ``vectors``, ``neighbours`` (and ``meta`` as JSON) to an ``.npz``, atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            arrays = {"words": np.array(vectors.words, dtype=str), "vectors": vectors.vectors,
                      "meta": np.array(json.dumps(meta or {}, sort_keys=True))}
            if vectors.neighbours is not None:
                arrays["neighbours"] = vectors.neighbours
            np.savez(fh, **arrays)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return path


def load_word_vectors(path: str | Path) -> WordVectors:
    """Read vectors written by :func:`save_word_vectors` (rows are normalised to unit length)."""
    path = Path(path)
    try:  # through the one reader: the archive and each array's header checked before allocation, no pickle
        data = fs.load_npz(path, what="word vectors")
        words = tuple(str(w) for w in data["words"])
        vectors = np.asarray(data["vectors"], dtype=np.float32)
        nn = np.asarray(data["neighbours"], dtype=np.int32) if "neighbours" in data else None
    except (OSError, KeyError, ValueError) as exc:
        raise SourceError(f"cannot read word vectors from {path}: {exc}") from None
    except fs.FileRefused as exc:
        raise SourceError(f"cannot read word vectors from {path}: {exc.reason}") from None
    if vectors.ndim != 2 or len(vectors) != len(words) or (nn is not None and len(nn) != len(words)):
        raise SourceError(f"{path}: words, vectors and neighbours disagree in length")
    vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return WordVectors(words, vectors, nn, path)


@contextmanager
def _lock(path: Path):
    """An exclusive lock on ``path`` (a no-op where ``fcntl`` is missing)."""
    try:
        import fcntl
    except ImportError:  # Windows: concurrent builds just repeat the work
        yield
        return
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
