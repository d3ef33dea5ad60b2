"""Embedding word swap: a word becomes one of its nearest neighbours in a counter-fitted embedding."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Annotated

import numpy as np
from pydantic import Field

from dogood.core.papers import Cites
from dogood.language.chars import pick
from dogood.language.embeddings import counter_fitted_glove, load_word_vectors, nearest_neighbours
from dogood.language.lexicons import MODALS, NEGATIONS, antonyms, base_forms, import_textattack, require
from dogood.language.pos_tagger import universal_tag
from dogood.shifts import params
from dogood.shifts.text._word_swap import WordSwapShift

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


#: TextAttack's ``WordSwapEmbedding()`` default, which Do-GOOD's scripts used.
REPO_CANDIDATES = 15


@lru_cache(maxsize=2)
def _repo_transformation(embedding: str, vocab_size: int | None):
    from textattack.transformations import CompositeTransformation

    return CompositeTransformation([_tools(embedding, vocab_size, REPO_CANDIDATES).transformation])


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

    With ``keep_meaning`` (the default) the constraints are those TextAttack's
    recipe A2T (Yoo and Qi 2021, ``a2t_yoo_2021.py``) combines with this very
    transformation: stopwords, the cosine floor of 0.8, and ``PartOfSpeech``
    with ``allow_verb_noun_swap=False`` (a replacement keeps the word's
    universal part of speech; the word tagged alone, as Do-GOOD's scripts
    attack each word on its own, by NLTK's averaged perceptron as
    TextAttack's ``nltk`` tagger, here with the model of
    :mod:`dogood.language.pos_tagger`), and no swap into or out of a negation
    or a modal verb, nor into a WordNet antonym: counter-fitted
    neighbours above the floor still took INTENDED to NOT, MAY to RESULT,
    SOON to TODAY and POSSIBLE to MIGHT on FUNSD test
    (``bench/measure_embedding_swap.py``). ``keep_meaning: false``: the
    ``EmbeddingAugmenter``'s constraints alone (dogood before issue 40).
    The vectors are dogood's counter-fitted GloVe build
    (:mod:`dogood.embeddings`, cached), TextAttack's ``paragramcf`` download,
    or an ``.npz`` written by :func:`dogood.embeddings.save_word_vectors`.
    Punctuation around a word is kept (``"Date:"`` -> ``"Dated:"``). Keeps
    boxes, labels, entities and the word count. Words not in the vocabulary,
    stopwords, non-Latin and over-long words are left unchanged and counted as
    ``unchangeable``.

    Parameters: :class:`EmbeddingSwap.Params`.
    """

    name = "embedding_swap"
    requires = ("module:textattack[text]", "glove")
    reported_counts = ("eligible", "changed", "unchangeable")
    papers = (Cites("do-good", "3.2, Word Swap 1; Table 4"), Cites("textattack"), Cites("counter-fitting"))
    cue_figures = {"word_style": ("funsd-t's config with render: true, FUNSD test, 50 pages "
                                  "(bench/measure_word_cue.py; the redraw before issue 40: 0.91)", {0: 0.6})}

    def requirements(self) -> tuple[str, ...]:
        """TextAttack, the GloVe vectors when the counter-fitted GloVe build is the embedding, and WordNet and the
        part-of-speech tagger with ``keep_meaning``."""
        needs = self.requires if self.embedding == "counter-fitted-glove" else self.requires[:1]
        return needs + (("nltk:wordnet", "pos:tagger") if self.keep_meaning else ())

    class Params(WordSwapShift.Params):
        max_candidates: params.Integer = Field(50, ge=1, description="neighbours considered per word (TextAttack's "
                                                                     "EmbeddingAugmenter: 50)")
        min_cos_sim: params.Real = Field(0.8, ge=-1, le=1, description=(
            "least cosine similarity of a replacement (EmbeddingAugmenter: 0.8; the TextFooler recipe's 0.5 lets "
            "unrelated words through in 50-d GloVe, where frequent words are all close)"))
        skip_stopwords: params.Flag = Field(True, description="leave TextAttack's English stopwords unchanged")
        embedding: params.Text = Field("counter-fitted-glove", description=(
            "counter-fitted-glove (dogood's build from $DOGOOD_DATA_DIR), paragramcf (TextAttack's download) or a "
            "path to an .npz of vectors"))
        vocab_size: Annotated[params.Integer | None, params.Expect("null or an integer")] = Field(None, ge=2, description=(
            "with counter-fitted-glove, keep GloVe's most frequent vocab_size words (null: all 50,000)"))
        keep_meaning: params.Flag = Field(True, description=(
            "TextAttack's part-of-speech constraint as its A2T recipe sets it (the word tagged alone; no noun for a "
            "verb) and no swap "
            "into or out of a negation or a modal verb, nor into a WordNet antonym (false: the EmbeddingAugmenter's "
            "constraints alone)"))

    def prepare(self) -> None:
        self._tools = _tools(self.embedding, self.vocab_size, self.max_candidates)
        if self.keep_meaning:
            require(f"{self.name} with keep_meaning", "wordnet", "pos_tagger")

    def repo_transformation(self, rng: np.random.Generator):
        """``style: repo``: TextAttack's ``WordSwapEmbedding()`` as Do-GOOD's scripts built it: its 15 nearest
        neighbours, no similarity constraint, over this shift's ``embedding``."""
        return _repo_transformation(self.embedding, self.vocab_size)

    def repo_differences(self, schema: str) -> str:
        return (f"the vectors are `{self.embedding}` (the scripts: TextAttack's paragramcf download, which "
                "`embedding: paragramcf` uses); the words are the source's words.")

    def swap(self, core: str, rng: np.random.Generator) -> str | None:
        tools = self._tools
        lower = core.lower()
        if lower not in tools.index or (self.skip_stopwords and lower in tools.stopwords):
            return None
        row = tools.unit[tools.index[lower]]
        candidates, seen = [], {lower}
        for word in tools.transformation._get_replacement_words(core):
            key = word.lower()
            if key not in seen and float(tools.unit[tools.index[key]] @ row) >= self.min_cos_sim:
                seen.add(key)
                if not self.keep_meaning or keeps_meaning(lower, key):
                    candidates.append(word)
        return pick(candidates, rng)


def keeps_meaning(word: str, new: str) -> bool:
    """Whether lower-case ``new`` may replace ``word`` (:class:`EmbeddingSwap`'s ``keep_meaning``): neither is a
    negation or a modal verb, both take the same universal part of speech tagged alone (A2T's ``PartOfSpeech``,
    no noun for a verb), and ``new`` is no WordNet antonym of ``word``."""
    if word in _GUARDED or new in _GUARDED or universal_tag(word) != universal_tag(new):
        return False
    opposite = _opposites(word)
    return not (opposite and (new in opposite or base_forms(new) & opposite))


_GUARDED = NEGATIONS | MODALS


@lru_cache(maxsize=65536)
def _opposites(word: str) -> frozenset[str]:
    """WordNet antonyms of ``word`` and of its base forms."""
    return frozenset().union(*(antonyms(form) for form in base_forms(word)))
