"""Embedding word swap: a word becomes one of its nearest neighbours in a counter-fitted embedding."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from dogood.embeddings import counter_fitted_glove, load_word_vectors, nearest_neighbours
from dogood.shifts._textattack import WordSwapShift, import_textattack, pick

#: Neighbours stored per word in dogood's own build (a swap may consider at most this many).
STORED_NEIGHBOURS = 50


@dataclass(frozen=True, eq=False)
class _Tools:
    transformation: object  # textattack WordSwapEmbedding
    unit: np.ndarray  # unit-length vectors, rows as in the embedding
    index: dict  # word -> row
    stopwords: frozenset


@lru_cache(maxsize=4)
def _tools(embedding: str, vocab_size: int | None, max_candidates: int) -> _Tools:
    """TextAttack's ``WordSwapEmbedding`` over the chosen vectors, their unit rows and TextAttack's stopwords."""
    import_textattack()
    from textattack.constraints.pre_transformation import StopwordModification
    from textattack.shared import WordEmbedding
    from textattack.transformations import WordSwapEmbedding

    if embedding == "paragramcf":  # TextAttack's own download (counter-fitted paragram, 300-d)
        ta_embedding = WordEmbedding.counterfitted_GLOVE_embedding()
        matrix = np.asarray(ta_embedding.embedding_matrix, dtype=np.float32)
        index = dict(ta_embedding._word2index)
    else:
        if embedding == "counter-fitted-glove":
            vectors = counter_fitted_glove(vocab_size, max(STORED_NEIGHBOURS, max_candidates))
        else:
            vectors = load_word_vectors(Path(embedding).expanduser())
            if vectors.neighbours is None or vectors.neighbours.shape[1] <= max_candidates:
                vectors = type(vectors)(vectors.words, vectors.vectors,
                                        nearest_neighbours(vectors.vectors, max_candidates), vectors.path)
        matrix, index = vectors.vectors, vectors.index
        ta_embedding = WordEmbedding(
            embedding_matrix=matrix,
            word2index=index,
            index2word=dict(enumerate(vectors.words)),
            nn_matrix=vectors.neighbours,
        )
    unit = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    transformation = WordSwapEmbedding(max_candidates=max_candidates, embedding=ta_embedding)
    return _Tools(transformation, unit, index, frozenset(StopwordModification().stopwords))


class EmbeddingSwap(WordSwapShift):
    """Swap words for near neighbours in counter-fitted vectors (Do-GOOD 3.2, Word Swap 1; Table 4 "Embedding").

    TextAttack's ``WordSwapEmbedding`` (Morris et al. 2020) proposes the
    ``max_candidates`` nearest neighbours of the lowercased word in
    counter-fitted vectors (Mrkšić et al. 2016), in the word's case pattern
    (lower, UPPER or Capitalized); those with cosine similarity below
    ``min_cos_sim`` are dropped, as TextAttack's ``WordEmbeddingDistance``
    constraint does, and one of the rest is drawn with the shift's generator.
    Stopwords are not swapped. Defaults are those of TextAttack's
    ``EmbeddingAugmenter`` (its ``embedding`` augmentation recipe).
    The vectors are dogood's counter-fitted GloVe build
    (:mod:`dogood.embeddings`, cached), TextAttack's ``paragramcf`` download,
    or an ``.npz`` written by :func:`dogood.embeddings.save_word_vectors`.
    Punctuation around a word is kept (``"Date:"`` -> ``"Dated:"``). Keeps
    boxes, labels, entities and the word count. Words not in the vocabulary,
    stopwords, non-Latin and over-long words are left unchanged and counted as
    ``unchangeable``.

    Parameters
    ----------
    fraction : share of the eligible words changed (paper: 0.1).
    labels : entity labels whose words are eligible (default: all words).
    max_candidates : neighbours considered per word (TextAttack's ``EmbeddingAugmenter``: 50).
    min_cos_sim : least cosine similarity of a replacement (``EmbeddingAugmenter``: 0.8; the
        TextFooler attack recipe's 0.5 lets unrelated words through in 50-d GloVe, where
        frequent words are all close).
    skip_stopwords : leave NLTK's English stopwords unchanged (default True).
    embedding : ``"counter-fitted-glove"`` (dogood's build from ``$DOGOOD_DATA_DIR``),
        ``"paragramcf"`` (TextAttack's download) or a path to an ``.npz`` of vectors.
    vocab_size : with ``"counter-fitted-glove"``, keep GloVe's most frequent ``vocab_size``
        words (default: all 50,000).
    render : redraw the changed words in the page image (default False: text only).
    """

    name = "embedding_swap"

    def __init__(
        self,
        fraction: float = 0.1,
        labels: Collection[str] | None = None,
        max_candidates: int = 50,
        min_cos_sim: float = 0.8,
        skip_stopwords: bool = True,
        embedding: str = "counter-fitted-glove",
        vocab_size: int | None = None,
        render: bool = False,
    ):
        self._common(fraction, labels, render)
        if int(max_candidates) < 1:
            raise ValueError(f"max_candidates must be >= 1, got {max_candidates}")
        if not -1.0 <= float(min_cos_sim) <= 1.0:
            raise ValueError(f"min_cos_sim must be in [-1, 1], got {min_cos_sim}")
        if vocab_size is not None and int(vocab_size) < 2:
            raise ValueError(f"vocab_size must be >= 2, got {vocab_size}")
        self.max_candidates = int(max_candidates)
        self.min_cos_sim = float(min_cos_sim)
        self.skip_stopwords = bool(skip_stopwords)
        self.embedding = str(embedding)
        self.vocab_size = None if vocab_size is None else int(vocab_size)

    def swap(self, core: str, rng: np.random.Generator) -> str | None:
        tools = _tools(self.embedding, self.vocab_size, self.max_candidates)
        lower = core.lower()
        if lower not in tools.index or (self.skip_stopwords and lower in tools.stopwords):
            return None
        row = tools.unit[tools.index[lower]]
        candidates, seen = [], {lower}
        for word in tools.transformation._get_replacement_words(core):
            key = word.lower()
            if key not in seen and float(tools.unit[tools.index[key]] @ row) >= self.min_cos_sim:
                seen.add(key)
                candidates.append(word)
        return pick(candidates, rng)
