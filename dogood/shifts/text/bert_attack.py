"""BERT-Attack word substitution: Do-GOOD section 3.2 (text shift, Table 4).

A fraction of a document's words are replaced by words that a masked
language model proposes for them *in their context*, as BERT-Attack (Li et
al., 2020) generates "similar but unseen words while guaranteeing fluency".
Boxes, labels, entities and links do not change; only word texts do (and the
pixels, with ``render=True``).

How one word is replaced
------------------------
1. The words to change are drawn with
   :func:`~dogood.language.budget.change_fraction`: ``round(fraction *
   eligible)`` of the token words whose entity label is in ``labels``; a word
   that cannot change is counted and the next drawn word takes its place.
2. The word is split into leading punctuation, a core and trailing
   punctuation (``"(Date:"`` -> ``"("``, ``"Date"``, ``":"``). Only a core of
   two or more Latin letters that is not an English stopword (NLTK's list)
   is replaced: numbers, codes (``R&D``, ``12/3``), non-Latin words, single
   letters (initials, list marks) and stopwords are left as they are and
   counted; blank words are never eligible.
3. Its context: ``context="page"`` takes up to ``window`` words on each side
   in the document's reading order (its word order); ``context="entity"``
   takes the other words of its entity (again at most ``window`` a side; a
   word in no entity uses the page). Words are dropped from the far ends
   until the input fits the model's maximum length; a word that alone does
   not fit, or that the model only knows as its unknown token, is counted
   as ``too_long`` / ``unknown_word``.
4. The core's sub-tokens are replaced by mask tokens and the model is run;
   the words of a document are batched into a few forward passes, and only
   the masked positions go through the output layer.
5. Candidates, best first (``top_k`` of them at most): for a one-token word,
   the ``top_k`` most probable vocabulary tokens that are whole words (no
   ``##``/continuation piece, no special token) of two or more Latin letters,
   not stopwords and not the word itself (case-insensitive). For a word of
   ``n > 1`` sub-tokens, all ``n`` are masked and, as BERT-Attack does, the
   per-position top-``top_k`` predictions are combined into words ranked by
   perplexity ``exp(-mean log p)``: a beam of width ``top_k`` over the
   positions, which gives exactly the ``top_k`` best combinations because
   the positions are scored independently. The first piece must start a
   word and the others must continue one (``##...`` in WordPiece, no ``Ġ``
   / ``▁`` in BPE / SentencePiece), so every combination is one word;
   stopwords and the word itself are then dropped.
6. One candidate is picked uniformly with the shift's generator; it takes
   the case pattern of the original core (``lower``, ``UPPER``,
   ``Capitalized``; a mixed-case word gives ``Capitalized`` when it starts
   upper-case) and its punctuation (``"(Date:"`` -> ``"(Period:"``).

What the papers leave open, and what we chose
---------------------------------------------
- *Context.* Do-GOOD's released code called TextAttack's default masked-LM
  swap (``WordSwapMaskedLM``, BAE method) on each word in isolation, so the
  model saw ``[CLS] [MASK] [SEP]``. The paper describes BERT-Attack, whose
  point is the context; we give the model the word's reading-order window
  (or its entity).
- *Masking.* Li et al. feed the unmasked sentence and read the model's
  predictions at the word's own positions; BAE masks the word. ``mask=True``
  (default) masks; ``mask=False`` is Li et al.'s unmasked variant (the word
  itself, usually the top prediction, is then dropped).
- *No target model.* BERT-Attack is an adversarial attack: it tries the
  candidates in order until a victim model's prediction flips, and filters
  antonyms with counter-fitted embeddings. A benchmark is built without a
  victim, so the candidate is drawn at random among the ``top_k``; no
  antonym or similarity filter is applied.
- *Why not TextAttack's* ``WordSwapMaskedLM(method="bert-attack")``
  (textattack 0.3.11, read in its source): it never masks (so it cannot
  give ``mask=True``); its ranking of sub-word combinations by perplexity
  is a no-op (``sorted(...)`` whose result is dropped), over all
  ``top_k ** n`` combinations (110,592 for a 3-piece word at 48); it pads
  every text to 512 tokens, runs one forward pass per text with its own
  global device; and its words (``AttackedText.words``, which splits
  ``R&D`` and drops punctuation) do not map one to one onto a document's
  words. We use ``transformers`` directly, with the same candidate rules.

The model is loaded once per process and device (:func:`masked_lm`) by Hub
name or folder, as :mod:`dogood.models.hf_model` loads models; a missing model
raises :class:`~dogood.models.ModelError` naming it, which a build reports.
torch and transformers are imported only then.
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from pydantic import Field

from dogood.core.document import Document
from dogood.core.errors import ModelError
from dogood.core.papers import Cites
from dogood.language.budget import budget, change_fraction
from dogood.language.edits import kept_tallies, redraw_guard, with_texts
from dogood.language.lexicons import require, stopwords
from dogood.language.selection import eligible_words
from dogood.language.words import case_like, is_latin, split_word
from dogood.shifts import params
from dogood.shifts.base import KEPT_HELP, Outcome, Shift
from dogood.shifts.text._word_swap import repo_augment

#: Rows (context windows) per forward pass.
BATCH_ROWS = 32
#: Why a drawn word was not changed (keys of the shift's counts).
REASONS = ("stopword", "one_letter", "not_alphabetic", "too_long", "unknown_word", "no_candidate")

_MODELS: dict[tuple[str, str], MaskedLM] = {}


# -- the model ---------------------------------------------------------------------------


def masked_lm(name_or_path: str | Path, device: str = "cpu") -> MaskedLM:
    """The masked language model ``name_or_path`` on ``device``, loaded once per process."""
    from dogood.core.hub import is_local_model

    name = str(name_or_path)
    key = (str(Path(name).expanduser().resolve()) if is_local_model(name) else name, str(device))
    if key not in _MODELS:
        _MODELS[key] = MaskedLM(name, device)
    return _MODELS[key]


class MaskedLM:
    """A Hugging Face masked language model with its fast tokenizer and per-token tables.

    Raises :class:`~dogood.models.ModelError` naming the model when it does not
    exist, cannot be loaded (a Hub id while offline), is no masked language
    model or has no mask token.
    """

    def __init__(self, name_or_path: str | Path, device: str = "cpu"):
        from dogood.core.extras import require_module

        torch = require_module("torch", "bert_attack", "text")
        require_module("transformers", "bert_attack", "text")
        from transformers import AutoModelForMaskedLM, AutoTokenizer

        from dogood.core.hub import hub_options, load_hf_config, model_source, tokenizer_with_prefix_space

        self.name = str(name_or_path)
        hint = "bert_attack needs a Hugging Face masked language model: give model= a Hub id (online) or a local folder"
        try:
            config = load_hf_config(self.name)
        except ModelError as exc:
            raise ModelError(f"{exc} ({hint})") from exc
        source = model_source(self.name)
        try:
            tokenizer = AutoTokenizer.from_pretrained(source, use_fast=True, **hub_options(source))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ModelError(f"masked language model {self.name!r}: cannot load its tokenizer: {exc}") from exc
        if not tokenizer.is_fast:
            raise ModelError(f"masked language model {self.name!r}: a fast tokenizer is needed, got {type(tokenizer).__name__}")
        tokenizer = tokenizer_with_prefix_space(tokenizer, source)
        if tokenizer.mask_token_id is None:
            raise ModelError(f"masked language model {self.name!r}: its tokenizer has no mask token")
        try:
            model = AutoModelForMaskedLM.from_pretrained(source, config=config, **hub_options(source))
        except (OSError, ValueError, KeyError) as exc:
            raise ModelError(f"cannot load {self.name!r} as a masked language model ({hint}): {exc}") from exc
        try:
            model.to(device)
        except (RuntimeError, AssertionError, ValueError) as exc:
            raise ModelError(f"masked language model {self.name!r}: cannot move it to device {device!r}: {exc}") from exc
        model.eval()
        self.model, self.tokenizer, self.device = model, tokenizer, device
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self.mask_id = tokenizer.mask_token_id
        self.unk_id = tokenizer.unk_token_id

        limits = [n for n in (getattr(tokenizer, "model_max_length", None), getattr(config, "max_position_embeddings", None))
                  if isinstance(n, int) and 0 < n < 1_000_000]
        self.max_length = min(limits) if limits else 512
        enc = tokenizer(["word"], is_split_into_words=True)
        ids, wids = enc["input_ids"], enc.word_ids()
        first, last = wids.index(0), len(wids) - wids[::-1].index(0)
        self.prefix, self.suffix = list(ids[:first]), list(ids[last:])
        self.budget = self.max_length - len(self.prefix) - len(self.suffix)

        size = int(getattr(config, "vocab_size", 0) or len(tokenizer))
        tokens = tokenizer.convert_ids_to_tokens(list(range(min(size, len(tokenizer)))))
        tokens += [""] * (size - len(tokens))
        special = set(tokenizer.all_special_ids)
        if any(t.startswith("##") for t in tokens):  # WordPiece: continuations start with ##
            starts = [not t.startswith("##") for t in tokens]
            pieces = [t[2:] if t.startswith("##") else t for t in tokens]
        else:
            marker = "Ġ" if sum(t.startswith("Ġ") for t in tokens) >= sum(t.startswith("▁") for t in tokens) else "▁"
            if any(t.startswith(marker) for t in tokens):  # byte-level BPE / SentencePiece: word starts carry a marker
                starts = [t.startswith(marker) for t in tokens]
                pieces = [t[len(marker):] if t.startswith(marker) else t for t in tokens]
            else:  # no way to tell continuations: only one-piece words
                starts, pieces = [True] * len(tokens), list(tokens)
        self.pieces = pieces
        alpha = torch.tensor([is_latin(p, letters_only=True) and i not in special for i, p in enumerate(pieces)])
        start = torch.tensor(starts)
        self.start_ok = alpha & start
        self.cont_ok = alpha & ~start
        stop = stopwords()
        self.word_ok = self.start_ok & torch.tensor([len(p) >= 2 and p.lower() not in stop for p in pieces])

    def __repr__(self) -> str:
        return f"MaskedLM({self.name!r}, device={self.device!r})"

    def tokenize(self, words: Sequence[str]) -> list[list[int]]:
        """The sub-token ids of each word (no special tokens); blank words get none."""
        out: list[list[int]] = [[] for _ in words]
        keep = [i for i, w in enumerate(words) if w.strip()]
        if not keep:
            return out
        enc = self.tokenizer([words[i].strip() for i in keep], is_split_into_words=True, add_special_tokens=False, verbose=False)
        for tok, wid in zip(enc["input_ids"], enc.word_ids()):
            if wid is not None:
                out[keep[wid]].append(tok)
        return out

    def log_probs(self, rows: Sequence[list[int]], spans: Sequence[tuple[int, int]]) -> list[Any]:
        """Log-probabilities over the vocabulary at positions ``start..start+n`` of each row: one ``(n, V)`` tensor per row."""
        import torch

        out = []
        head = self.model.get_output_embeddings()
        for b in range(0, len(rows), BATCH_ROWS):
            chunk, cspans = rows[b : b + BATCH_ROWS], spans[b : b + BATCH_ROWS]
            length = max(len(r) for r in chunk)
            ids = torch.full((len(chunk), length), self.pad_id, dtype=torch.long)
            att = torch.zeros((len(chunk), length), dtype=torch.long)
            for r, row in enumerate(chunk):
                ids[r, : len(row)] = torch.tensor(row)
                att[r, : len(row)] = 1
            rr = torch.tensor([r for r, (_, n) in enumerate(cspans) for _ in range(n)], device=self.device)
            cc = torch.tensor([s + j for s, n in cspans for j in range(n)], device=self.device)

            def only_masked(module, args):  # the output layer sees only the positions asked for
                h = args[0]
                if h.dim() == 3 and tuple(h.shape[:2]) == tuple(ids.shape):
                    return (h[rr, cc],) + tuple(args[1:])
                return None

            handle = head.register_forward_pre_hook(only_masked) if head is not None else None
            try:
                with torch.no_grad():
                    logits = self.model(input_ids=ids.to(self.device), attention_mask=att.to(self.device)).logits
            finally:
                if handle is not None:
                    handle.remove()
            if logits.dim() == 3:
                logits = logits[rr, cc]
            lp = logits.float().log_softmax(-1).cpu()
            pos = 0
            for _, n in cspans:
                out.append(lp[pos : pos + n])
                pos += n
        return out


def best_combinations(log_probs: Any, allowed: Sequence[Any], k: int) -> list[tuple[list[int], float]]:
    """The ``k`` best token sequences (one token per position) by perplexity, best first.

    ``log_probs`` is ``(n, V)`` (positions scored independently), ``allowed[p]``
    a boolean mask of the tokens allowed at position ``p``. A beam of width
    ``k`` is exact here: a sequence among the ``k`` best has every prefix
    among the ``k`` best prefixes. Ties go to the lower token ids. Returns
    ``(token ids, perplexity)`` pairs, ``perplexity = exp(-mean log p)``.
    """
    import torch

    n = log_probs.shape[0]
    beams = torch.zeros(1, dtype=torch.float32)
    seqs = torch.zeros((1, 0), dtype=torch.long)
    for p in range(n):
        scores = log_probs[p].masked_fill(~allowed[p], float("-inf"))
        order = torch.sort(scores, descending=True, stable=True).indices[:k]
        order = order[torch.isfinite(scores[order])]
        if order.numel() == 0:
            return []
        total = (beams[:, None] + scores[order][None, :]).reshape(-1)
        best = torch.sort(total, descending=True, stable=True).indices[:k]
        seqs = torch.cat([seqs[best // order.numel()], order[best % order.numel()][:, None]], dim=1)
        beams = total[best]
    return [(s.tolist(), math.exp(-float(b) / n)) for s, b in zip(seqs, beams)]


# -- the shift ---------------------------------------------------------------------------


@dataclass
class _Row:
    index: int
    lead: str
    core: str
    trail: str
    ids: list[int]
    span: tuple[int, int]  # (first masked position, number of sub-tokens)


class BertAttack(Shift):
    """Replace a fraction of words by a masked language model's candidates in their context (Do-GOOD 3.2).

    Keeps boxes, labels, entities and links; keeps each changed word's
    punctuation and case pattern. Stopwords, words that are not Latin
    letters (numbers, codes, other scripts) and words the model cannot take
    are left unchanged and counted (see the module docstring for every rule).

    Parameters: :class:`BertAttack.Params`.
    """

    name = "bert_attack"
    requires = ("module:transformers[text]", "module:torch[text]", "nltk:stopwords", "model:model")
    reported_counts = ("eligible", "changed", "unchangeable", "stopword", "one_letter", "not_alphabetic", "too_long",
                       "unknown_word", "no_candidate")
    counts_help: ClassVar[dict[str, str]] = {
        **Shift.counts_help,
        "stopword": "drawn words left alone because they are stopwords",
        "one_letter": "drawn words left alone because they have one letter",
        "not_alphabetic": "drawn words left alone because their core holds a character other than a Latin letter",
        "too_long": "drawn words left alone because their subword pieces do not fit the masked LM's input",
        "unknown_word": "drawn words left alone because the masked LM's tokenizer reads them as unknown tokens",
        "no_candidate": "drawn words for which the masked LM proposed no replacement that passed the checks",
    }
    family = "text"
    tallies_help: ClassVar[dict[str, str]] = {"kept": KEPT_HELP}
    factors = frozenset({"text"})
    #: ``render: true`` redraws words: a build tests them for the redrawn-word cue (:mod:`dogood.measures.word_style`).
    render_cues = frozenset({"word_style"})
    #: Severity levels (:mod:`dogood.shifts.levels`): the share of eligible words changed, as the other word swaps;
    #: measured by the share of words whose text changed.
    severities: ClassVar[dict[int, dict]] = {1: {"fraction": 0.05}, 2: {"fraction": 0.1}, 3: {"fraction": 0.2},
                                             4: {"fraction": 0.3}, 5: {"fraction": 0.5}}
    papers = (Cites("do-good", "3.2, BERT-Attack; Table 4"),
              Cites("bert-attack", "3.2", inspired_by=(
                  "candidates come from the masked word in its reading-order window (or entity), not from the unmasked "
                  "sentence by default, and one of the top_k is drawn at random: no victim model, no antonym filter")))

    path_params = ("model",)  # a file or folder this machine reads (recorded by name and content hash)

    class Params(params.Params):
        fraction: params.Real = Field(0.1, ge=0, le=1, description="share of the eligible words changed (paper: 0.1)")
        labels: params.OptionalNames = Field(None, description="entity labels whose words are eligible (null: all words)")
        model: params.Text = Field("bert-base-uncased", description="Hugging Face masked language model: Hub id or folder")
        top_k: params.Integer = Field(48, ge=1, description="candidates per word (BERT-Attack: 48); one is drawn uniformly")
        context: Literal["page", "entity"] = Field("page", description=(
            "the word's context: page (reading-order window) or entity (the word's entity)"))
        window: params.Integer = Field(16, ge=1, description="most context words on each side of the word")
        mask: params.Flag = Field(True, description="mask the word (BAE) or read the unmasked input (Li et al.)")
        render: params.Flag = Field(False, description="redraw the changed words in the page image (false: text only)")
        device: params.Text = Field("cpu", description="torch device of the model")
        style: Literal["dogood", "repo"] = Field("dogood", description=(
            "dogood: the word masked in its context; repo: Do-GOOD's scripts: TextAttack's WordSwapMaskedLM() "
            "default (BAE, 50 candidates, confidence 5e-4) on each word alone, through TextAttack's augmenter"))
        pct_words_to_swap: params.Real = Field(1.0, gt=0, le=1, description=(
            "style repo: TextAttack's pct_words_to_swap for one word's text (Do-GOOD's FUNSD script: 0.1)"))
        max_chars: Annotated[params.Integer | None, params.Expect("null or an integer")] = Field(None, ge=1, description=(
            "style repo: words longer than this are left alone (Do-GOOD's RVL-CDIP script: 10; null: none)"))

    #: Added with issue 38: at these values a config's seeds and provenance are what they were.
    later_params: ClassVar[dict] = {"style": "dogood", "pct_words_to_swap": 1.0, "max_chars": None}

    def prepare(self) -> None:
        # The model itself loads on first use in each worker (masked_lm), where a build reports a failure by config;
        # a Hub id that is not cached while the Hub cannot be reached fails here, at once.
        from dogood.core.hub import check_hub_model

        require(self.name, "stopwords")
        check_hub_model(self.model)

    def card_notes(self, schema: str = "funsd") -> list[str]:
        if self.style == "repo":
            cap = f"; words over {self.max_chars} characters left alone" if self.max_chars is not None else ""
            return [f"`bert_attack`, style `repo`: as Do-GOOD's scripts (MAEHCM/Do-GOOD) do it: each word alone "
                    f"through TextAttack's augmenter with `WordSwapMaskedLM()`'s defaults (BAE: the word masked "
                    f"with no context, 50 candidates of confidence 5e-4 or more) on `{self.params()['model']}` "
                    f"(pct_words_to_swap {self.pct_words_to_swap}, RepeatModification and StopwordModification), on "
                    f"{self.fraction:.0%} of the words (the scripts: every word){cap}. Differs in: draws from "
                    "the config's seed; the words are the source's words."]
        where = "the page's reading order" if self.context == "page" else "its entity's text"
        return [f"`bert_attack`: each word is masked in its context ({where}, {self.window} words around it) and "
                f"replaced by one of `{self.params()['model']}`'s top {self.top_k} whole-word candidates, as the "
                "BERT-Attack and "
                "Do-GOOD papers describe; Do-GOOD's released code instead ran TextAttack's BAE default on each word "
                "alone. " + ("Changed words are redrawn in the image." if self.render
                             else "The image still shows the original words (the papers change the text only).")]

    # -- public helpers ----------------------------------------------------------------
    def candidates(self, doc: Document, indices: Sequence[int]) -> dict[int, list[str]]:
        """The replacement texts of words ``indices``, best first (empty where the word cannot change)."""
        plan = _Planner(self, doc, masked_lm(self.model, self.device))
        plan.run(list(indices))
        return {i: (r if isinstance(r, list) else []) for i, r in ((i, plan.results[i]) for i in indices)}

    def apply(self, doc: Document, rng: np.random.Generator) -> Outcome:
        if self.style == "repo":
            transformation = _repo_masked_lm(masked_lm(self.model, self.device))
            changes, counts = change_fraction(
                doc, rng, self.fraction, lambda i, r: repo_augment(doc.words[i].text, transformation, r,
                                                                   self.pct_words_to_swap, self.max_chars),
                self.labels)
            return Outcome(with_texts(doc, changes, self.render), {**counts, **{r: 0 for r in REASONS}})
        plan = _Planner(self, doc, masked_lm(self.model, self.device))
        eligible = eligible_words(doc, self.labels)
        # change_fraction draws its order first; a copy of the generator tells which words come, so
        # they are batched. Only speed depends on this guess: a word outside it is computed when drawn.
        order = [eligible[int(i)] for i in copy.deepcopy(rng).permutation(len(eligible))]
        plan.expect(order, budget(self.fraction, len(eligible)))
        guard = redraw_guard(doc, self.render)
        changes, counts = change_fraction(doc, rng, self.fraction, plan.change, self.labels, guard)
        return Outcome(with_texts(doc, changes, self.render), {**counts, **{r: plan.reasons[r] for r in REASONS}},
                       kept_tallies(guard))


_REPO: dict[int, Any] = {}


def _repo_masked_lm(lm: MaskedLM):
    """TextAttack's ``WordSwapMaskedLM()`` with its defaults (method ``bae``, 50 candidates, confidence 5e-4) over
    ``lm``, as Do-GOOD's scripts built it (``style: repo``), in a ``CompositeTransformation``. A word alone has the
    same masked text as every word with the same punctuation, so its candidates are computed once per masked text."""
    if id(lm) not in _REPO:
        from dogood.language.lexicons import import_textattack

        import_textattack()
        from textattack.transformations import CompositeTransformation, WordSwapMaskedLM

        class _Cached(WordSwapMaskedLM):
            def __init__(self, **kwargs):
                super().__init__(**kwargs)
                self._seen: dict[str, list[str]] = {}

            def _bae_replacement_words(self, current_text, indices_to_modify):
                key = [current_text.replace_word_at_index(i, self._lm_tokenizer.mask_token).text
                       for i in indices_to_modify]
                todo = [i for i, k in zip(indices_to_modify, key) if k not in self._seen]
                if todo:
                    for k, words in zip((current_text.replace_word_at_index(i, self._lm_tokenizer.mask_token).text
                                         for i in todo), super()._bae_replacement_words(current_text, todo)):
                        self._seen[k] = words
                return [self._seen[k] for k in key]

        _REPO[id(lm)] = CompositeTransformation([_Cached(masked_language_model=lm.model, tokenizer=lm.tokenizer,
                                                         max_length=min(512, lm.max_length))])
    return _REPO[id(lm)]


class _Planner:
    """Candidates for the words of one document, computed in batches in the order they will be drawn."""

    def __init__(self, shift: BertAttack, doc: Document, lm: MaskedLM):
        self.shift, self.doc, self.lm = shift, doc, lm
        self.stop = stopwords()
        self.word_ids = lm.tokenize([w.text for w in doc.words])
        self.results: dict[int, list[str] | str] = {}
        self.rows: dict[int, _Row | str] = {}
        self.reasons: Counter[str] = Counter()
        self.order: list[int] = []
        self.place: dict[int, int] = {}
        self.target = 0
        self.changed = 0
        token_words = [i for i, w in enumerate(doc.words) if w.text.strip()]
        self.page = token_words
        self.page_place = {i: k for k, i in enumerate(token_words)}
        self.entity_of: dict[int, list[int]] = {}
        if shift.context == "entity":
            for ent in doc.entities:
                members = [i for i in ent.word_ids if doc.words[i].text.strip()]
                for i in members:
                    self.entity_of[i] = members

    def expect(self, order: list[int], target: int) -> None:
        self.order, self.target = order, target
        self.place = {i: k for k, i in enumerate(order)}

    def change(self, index: int, rng: np.random.Generator) -> str | None:
        if index not in self.results:
            # this word and the next ones expected to need the model, ~10% more than still needed
            need = max(self.target - self.changed, 1)
            batch = [index]
            k = self.place.get(index, len(self.order)) + 1
            while len(batch) < need + need // 10 + 1 and k < len(self.order):
                j = self.order[k]
                if j not in self.results and not isinstance(self._prepared(j), str):
                    batch.append(j)
                k += 1
            self.run(batch)
        result = self.results[index]
        if isinstance(result, str):
            self.reasons[result] += 1
            return None
        self.changed += 1
        return result[int(rng.integers(len(result)))]

    def run(self, indices: list[int]) -> None:
        """Fill ``results`` for ``indices``: a list of candidate texts or the reason there is none."""
        rows = []
        for i in dict.fromkeys(indices):
            if i not in self.results:
                row = self._prepared(i)
                if not isinstance(row, str):
                    rows.append(row)
        if not rows:
            return
        lps = self.lm.log_probs([r.ids for r in rows], [r.span for r in rows])
        for row, lp in zip(rows, lps):
            words = self._words(row, lp)
            self.results[row.index] = [row.lead + case_like(w, row.core) + row.trail for w in words] or "no_candidate"

    def _prepared(self, i: int) -> _Row | str:
        """Word ``i``'s model input, or why it cannot change (then already its result)."""
        if i not in self.rows:
            self.rows[i] = row = self._row(i)
            if isinstance(row, str):
                self.results[i] = row
        return self.rows[i]

    def _row(self, i: int) -> _Row | str:
        lead, core, trail = split_word(self.doc.words[i].text.strip())
        if not is_latin(core, letters_only=True):
            return "not_alphabetic"
        if core.lower() in self.stop:
            return "stopword"
        if len(core) < 2:
            return "one_letter"
        lm = self.lm
        pieces = [p for p in (lead, core, trail) if p]
        enc = lm.tokenizer(pieces, is_split_into_words=True, add_special_tokens=False, verbose=False)
        own: dict[int, list[int]] = {}
        for tok, wid in zip(enc["input_ids"], enc.word_ids()):
            if wid is not None:
                own.setdefault(wid, []).append(tok)
        c = pieces.index(core)
        before, core_ids, after = sum((own.get(w, []) for w in range(c)), []), own.get(c, []), own.get(c + 1, [])
        if not core_ids or len(before) + len(core_ids) + len(after) > lm.budget:
            return "too_long"
        if lm.unk_id is not None and all(t == lm.unk_id for t in core_ids):
            return "unknown_word"
        seq = self.entity_of.get(i) if self.shift.context == "entity" else None
        if seq is None:
            seq, at = self.page, self.page_place[i]
        else:
            at = seq.index(i)
        used = len(before) + len(core_ids) + len(after)
        left: list[list[int]] = []
        right: list[list[int]] = []
        open_left = open_right = True
        for d in range(1, self.shift.window + 1):
            for side, j in ((-1, at - d), (1, at + d)):
                if not (open_left if side < 0 else open_right):
                    continue
                if not 0 <= j < len(seq):
                    continue
                ids = self.word_ids[seq[j]]
                if used + len(ids) > lm.budget:
                    if side < 0:
                        open_left = False
                    else:
                        open_right = False
                    continue
                used += len(ids)
                (left if side < 0 else right).append(ids)
        masked = [lm.mask_id] * len(core_ids) if self.shift.mask else core_ids
        head = lm.prefix + sum(reversed(left), []) + before
        ids = head + masked + after + sum(right, []) + lm.suffix
        return _Row(i, lead, core, trail, ids, (len(head), len(core_ids)))

    def _words(self, row: _Row, lp: Any) -> list[str]:
        """Candidate words (lower-case pieces joined), best first, without stopwords, repeats or the word itself."""
        lm, k = self.lm, self.shift.top_k
        n = lp.shape[0]
        vocab = lp.shape[1]
        if n == 1:
            allowed = [lm.word_ok[:vocab]]
        else:
            allowed = [lm.start_ok[:vocab]] + [lm.cont_ok[:vocab]] * (n - 1)
        own = row.core.lower()
        seen = {own}
        out = []
        for seq, _ in best_combinations(lp, allowed, k + 1):
            word = "".join(lm.pieces[t] for t in seq).lower()
            if word in seen or len(word) < 2 or word in self.stop:
                continue
            seen.add(word)
            out.append(word)
        return out[:k]
