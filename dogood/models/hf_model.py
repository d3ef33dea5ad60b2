"""Hugging Face models behind dogood's model protocol (:class:`dogood.models.Model`).

Two adapters, picked by :func:`load_hf_model` from ``config.architectures``:

- :class:`HFTokenClassifier` (``task == "token"``, FUNSD-style): any
  ``...ForTokenClassification`` model: LayoutLMv3 (image, words and 0-1000
  boxes), LiLT and LayoutLM (words and 0-1000 boxes), BROS (words and 0-1
  boxes), and plain text models (BERT, RoBERTa, ...: words only);
- :class:`HFDocumentClassifier` (``task == "document"``, RVL-CDIP-style):
  ``...ForImageClassification`` models (DiT, ViT, BEiT, ...: page image only),
  ``LayoutLMv3ForSequenceClassification`` (image, words, boxes) and plain text
  ``...ForSequenceClassification`` models (the words joined by spaces).

What a model is given is read from its ``forward`` signature (``bbox``,
``pixel_values``) and ``config.model_type``, not from a list of model names.
Only the token words (non-blank text, :func:`dogood.core.schema.iob_tags`) are fed,
in document order. Label names come from ``config.id2label`` and must be
dogood's (:data:`~dogood.core.schema.FUNSD_NER_TAGS`,
:data:`~dogood.core.schema.RVL_CDIP_CLASSES`), up to case and ``_``/``-``/space;
``labels=`` renames them.

torch and transformers are imported only when a model is loaded.
"""

from __future__ import annotations

import inspect
import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dogood.core.boxes import normalize_box
from dogood.core.document import Document
from dogood.core.hub import hub_options, is_local_model, load_hf_config, model_source, tokenizer_with_prefix_space
from dogood.core.schema import BOX_LEVELS, FUNSD_NER_TAGS, RVL_CDIP_CLASSES, iob_tags, token_boxes
from dogood.models.base import ModelError
from dogood.models.predictions import Prediction

__all__ = ["HFDocumentClassifier", "HFTokenClassifier", "load_hf_model"]


_TOKEN_ARCHITECTURES = ("ForTokenClassification",)
_DOCUMENT_ARCHITECTURES = ("ForSequenceClassification", "ForImageClassification")
_GENERIC_LABEL = re.compile(r"LABEL_\d+")


def load_hf_model(name_or_path: str | Path, task: str | None = None, **options) -> HFTokenClassifier | HFDocumentClassifier:
    """Load a Hugging Face model folder or Hub id as a dogood model.

    Parameters
    ----------
    name_or_path : str or Path
        A folder written by ``save_pretrained`` (with its tokenizer, processor
        or image processor) or a Hub model id.
    task : {"token", "document"}, optional
        Which adapter to use. By default it follows ``config.architectures``:
        ``...ForTokenClassification`` gives :class:`HFTokenClassifier`,
        ``...ForSequenceClassification`` and ``...ForImageClassification``
        give :class:`HFDocumentClassifier`.
    **options
        Passed to the adapter: ``labels``, ``device``, ``batch_size``,
        ``max_length``.

    Raises
    ------
    ModelError
        Naming the model, when it does not exist, cannot be loaded (a Hub id
        while offline, say), is of an unsupported kind, or has labels that are
        not dogood's.
    """
    from dogood.core.extras import require_module

    for module in ("torch", "transformers"):
        require_module(module, f"the Hugging Face model {str(name_or_path)!r}", "hf")
    name = str(name_or_path)
    if task is None:
        config = load_hf_config(name)
        task = _task_of(config, name)
    if task == "token":
        return HFTokenClassifier(name, **options)
    if task == "document":
        return HFDocumentClassifier(name, **options)
    if task == "qa":
        raise ModelError(f"model {name!r}: question answering models are not supported by dogood.models.hf_model")
    raise ValueError(f"task must be 'token' or 'document', got {task!r}")


def _task_of(config, name: str) -> str:
    architectures = list(getattr(config, "architectures", None) or [])
    for arch in architectures:
        if arch.endswith(_TOKEN_ARCHITECTURES):
            return "token"
        if arch.endswith(_DOCUMENT_ARCHITECTURES):
            return "document"
    found = ", ".join(architectures) or "none"
    raise ModelError(
        f"model {name!r}: cannot tell its task from its architectures ({found}); "
        "expected ...ForTokenClassification, ...ForSequenceClassification or ...ForImageClassification, "
        "or pass task='token' / task='document'"
    )


def _label_key(label: str) -> str:
    return re.sub(r"[\s_\-]+", " ", str(label).strip().lower())


def _resolve_labels(config, labels, allowed: Sequence[str], name: str, what: str) -> tuple[str, ...]:
    """The dogood name of each model output, in id order."""
    id2label = {int(k): str(v) for k, v in (getattr(config, "id2label", None) or {}).items()}
    n = int(getattr(config, "num_labels", len(id2label)) or len(id2label))
    if sorted(id2label) != list(range(n)):
        id2label = {i: f"LABEL_{i}" for i in range(n)}
    model_names = [id2label[i] for i in range(n)]
    if labels is None:
        if all(_GENERIC_LABEL.fullmatch(label) for label in model_names):
            raise ModelError(
                f"model {name!r} has generic labels ({', '.join(model_names[:3])}{', ...' if n > 3 else ''}): "
                f"pass labels=[...] (the {what} in id order) or a mapping from its label names to {what}"
            )
        names = model_names
    elif isinstance(labels, Mapping):
        unknown = [k for k in labels if k not in model_names and k not in id2label]
        if unknown:
            raise ModelError(f"model {name!r} has no label(s) {', '.join(map(repr, unknown))}; its labels are {model_names}")
        names = [labels.get(model_names[i], labels.get(i, model_names[i])) for i in range(n)]
    else:
        names = [str(label) for label in labels]
        if len(names) != n:
            raise ModelError(f"model {name!r} has {n} labels but {len(names)} names were given")
    by_key = {_label_key(a): a for a in allowed}
    resolved = [label if label in allowed else by_key.get(_label_key(label)) for label in names]
    bad = [label for label, r in zip(names, resolved) if r is None]
    if bad:
        raise ModelError(
            f"model {name!r}: label(s) {', '.join(map(repr, bad))} are not {what} ({', '.join(allowed)}); "
            "pass labels= to map them"
        )
    return tuple(resolved)  # type: ignore[arg-type]


def _unique_ids(docs: Sequence[Document]) -> None:
    seen: set[str] = set()
    for doc in docs:
        if doc.id in seen:
            raise ModelError(f"document id {doc.id!r} appears twice in the documents to predict")
        seen.add(doc.id)


class _HFModel:
    """Loading shared by the adapters: config, weights, labels, preprocessors."""

    task: str
    _allowed: tuple[str, ...]
    _what: str

    def __init__(self, name_or_path: str | Path, labels, device, batch_size: int):
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.name_or_path = str(name_or_path)
        self.name = Path(self.name_or_path).name if is_local_model(self.name_or_path) else self.name_or_path
        self.batch_size = int(batch_size)
        self.config = load_hf_config(self.name_or_path)
        self._source = model_source(self.name_or_path)
        for arch in getattr(self.config, "architectures", None) or []:
            if "Spade" in arch:
                raise ModelError(f"model {self.name!r}: {arch} (entity linking heads) is not supported")
        self.labels = _resolve_labels(self.config, labels, self._allowed, self.name_or_path, self._what)
        self.model = self._load_weights()
        self.model_type = getattr(self.config, "model_type", "")
        self.inputs = frozenset(inspect.signature(self.model.forward).parameters)
        if getattr(self.config, "visual_embed", True) is False:
            # a LayoutLMv3 built without its patch embedding (visual_embed=False) takes no pixels, whatever forward says
            self.inputs = self.inputs - {"pixel_values"}
        if "image" in self.inputs and "pixel_values" not in self.inputs:
            raise ModelError(
                f"model {self.name!r} ({self.model_type}) takes a detectron2 'image' input, which dogood.models.hf_model does not feed"
            )
        try:
            self.model.to(device)
        except (RuntimeError, AssertionError, ValueError) as exc:
            raise ModelError(f"model {self.name!r}: cannot move it to device {device!r}: {exc}") from exc
        self.model.eval()
        self.device = device

    def _auto_class(self):
        raise NotImplementedError

    def _load_weights(self):
        try:
            return self._auto_class().from_pretrained(self._source, **hub_options(self._source))
        except (OSError, ValueError, KeyError) as exc:
            raise ModelError(f"cannot load the weights of Hugging Face model {self.name_or_path!r}: {exc}") from exc

    def _preprocessors(self, need_tokenizer: bool, need_images: bool):
        """The model's fast tokenizer and image processor (``None`` where not needed)."""
        from transformers import AutoImageProcessor, AutoProcessor, AutoTokenizer, PreTrainedTokenizerBase
        from transformers.image_processing_utils import BaseImageProcessor

        tokenizer = image_processor = None
        try:
            proc = AutoProcessor.from_pretrained(self._source, **hub_options(self._source))
        except Exception:  # no processor of its own: tokenizer and image processor are loaded one by one below
            proc = None
        if isinstance(proc, PreTrainedTokenizerBase):
            tokenizer = proc
        elif isinstance(proc, BaseImageProcessor):
            image_processor = proc
        elif proc is not None:
            tokenizer = getattr(proc, "tokenizer", None)
            image_processor = getattr(proc, "image_processor", None)
        if need_tokenizer and (tokenizer is None or not tokenizer.is_fast):
            try:
                tokenizer = AutoTokenizer.from_pretrained(self._source, use_fast=True, **hub_options(self._source))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise ModelError(f"model {self.name!r}: cannot load its tokenizer: {exc}") from exc
            if not tokenizer.is_fast:
                raise ModelError(f"model {self.name!r}: dogood needs a fast tokenizer (word ids), got {type(tokenizer).__name__}")
        if need_images and image_processor is None:
            try:
                image_processor = AutoImageProcessor.from_pretrained(self._source, **hub_options(self._source))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise ModelError(f"model {self.name!r}: cannot load its image processor: {exc}") from exc
        if image_processor is not None and getattr(image_processor, "apply_ocr", False):
            image_processor.apply_ocr = False  # dogood gives the words; never OCR again
        return (tokenizer if need_tokenizer else None), (image_processor if need_images else None)

    def _pixels(self, docs: Sequence[Document]):
        images = [doc.image.to_pil().convert("RGB") for doc in docs]
        return self.image_processor(images=images, return_tensors="pt")["pixel_values"]

    def _forward(self, inputs: dict[str, Any]):
        """Softmax probabilities of the model's logits, on the CPU."""
        import torch

        fed = {k: v.to(self.device) for k, v in inputs.items() if k in self.inputs}
        with torch.no_grad(), warnings.catch_warnings():
            # raised inside some transformers 4.x models (LayoutLMv3) on every call; nothing dogood can change
            warnings.filterwarnings("ignore", message="The `device` argument is deprecated", category=FutureWarning)
            logits = self.model(**fed).logits
        return logits.float().softmax(-1).cpu()

    #: Inputs it can be scored without (``dogood eval --ablate``): any, since they are removed from the document.
    ablations = frozenset({"text", "layout", "image"})

    @property
    def mask_token(self) -> str | None:
        """The tokenizer's mask token (what ``--ablate text`` puts in place of each word), if it has one."""
        tokenizer = getattr(self, "tokenizer", None)
        return getattr(tokenizer, "mask_token", None)

    @property
    def sees(self) -> frozenset[str]:
        """What the model is given, from its forward inputs: ``text`` (input_ids), ``layout`` (bbox), ``image`` (pixel_values)."""
        keys = {"text": "input_ids", "layout": "bbox", "image": "pixel_values"}
        return frozenset(m for m, key in keys.items() if key in self.inputs)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name_or_path!r}, task={self.task!r}, model_type={self.model_type!r})"


class _WordEncoder:
    """Turns lists of words (and their boxes) into model inputs with one word id per sub-token.

    Boxes go in one of two ways: a tokenizer that takes ``boxes`` (LayoutLMv3,
    LayoutXLM, UDOP: used by LayoutLMv3 and LiLT checkpoints) spreads each
    word's box over its sub-tokens itself; otherwise the words are tokenized
    with ``is_split_into_words=True`` and, when the model's forward takes
    ``bbox``, each sub-token gets its word's box (special and padding tokens
    get ``[0, 0, 0, 0]``).
    """

    def __init__(self, tokenizer, inputs: frozenset[str], float_boxes: bool, max_length: int):
        self.tokenizer = tokenizer
        self.takes_bbox = "bbox" in inputs
        self.float_boxes = float_boxes
        self.tokenizer_boxes = (
            self.takes_bbox and not float_boxes and "boxes" in inspect.signature(tokenizer.__call__).parameters
        )
        limit = getattr(tokenizer, "model_max_length", None)
        if isinstance(limit, int) and 0 < limit < 1_000_000:
            max_length = min(max_length, limit)
        self.max_length = max_length
        self.budget = max_length - tokenizer.num_special_tokens_to_add(pair=False)
        if self.budget < 1:
            raise ValueError(f"max_length {max_length} leaves no room for words beside the special tokens")

    def _call(self, words, boxes, **kwargs):
        if self.tokenizer_boxes:
            return self.tokenizer(words, boxes=boxes, verbose=False, **kwargs)
        return self.tokenizer(words, is_split_into_words=True, verbose=False, **kwargs)

    def prepare(self, words: list[str], boxes: list) -> tuple[list[str], list[int]]:
        """The words as fed (a word with no sub-token becomes the unknown token) and each one's sub-token count."""
        enc = self._call(words, boxes, add_special_tokens=False, truncation=False)
        counts = [0] * len(words)
        for wid in enc.word_ids():
            if wid is not None:
                counts[wid] += 1
        if 0 in counts and self.tokenizer.unk_token is not None:
            words = [w if c else self.tokenizer.unk_token for w, c in zip(words, counts)]
            counts = [c or 1 for c in counts]
        return words, counts

    def chunks(self, counts: list[int]) -> list[tuple[int, int]]:
        """Consecutive ``(start, end)`` word ranges whose sub-tokens fit ``max_length``."""
        out: list[tuple[int, int]] = []
        start, used = 0, 0
        for i, c in enumerate(counts):
            if i > start and used + c > self.budget:
                out.append((start, i))
                start, used = i, 0
            used += c
        if start < len(counts):
            out.append((start, len(counts)))
        return out

    def encode(self, words_batch: list[list[str]], boxes_batch: list[list]) -> tuple[dict, list[list[int | None]]]:
        import torch

        enc = self._call(
            words_batch, boxes_batch, truncation=True, max_length=self.max_length, padding=True, return_tensors="pt"
        )
        word_ids = [enc.word_ids(i) for i in range(len(words_batch))]
        inputs = dict(enc)
        if self.takes_bbox and not self.tokenizer_boxes:
            empty = [0.0] * 4
            rows = [[boxes[w] if w is not None else empty for w in ids] for ids, boxes in zip(word_ids, boxes_batch)]
            inputs["bbox"] = torch.tensor(rows, dtype=torch.float32 if self.float_boxes else torch.long)
        return inputs, word_ids


def _takes_boxes(model) -> bool:
    encoder = getattr(model, "encoder", None)
    return bool(encoder is not None and encoder.takes_bbox)


def _check_box_level(box_level: str) -> str:
    if box_level not in BOX_LEVELS:
        raise ModelError(f"box_level must be one of {', '.join(BOX_LEVELS)}, got {box_level!r}")
    return box_level


def _word_box(box, width: int, height: int, float_boxes: bool) -> list:
    if float_boxes:  # BROS: x / page width, y / page height, in [0, 1]
        x0, y0, x1, y1 = box
        return [min(1.0, max(0.0, v)) for v in (x0 / width, y0 / height, x1 / width, y1 / height)]
    return normalize_box(box, width, height)


class HFTokenClassifier(_HFModel):
    """A Hugging Face token classification model as a FUNSD tagger (``task == "token"``).

    Supported: any ``AutoModelForTokenClassification`` model with a fast
    tokenizer. What it is given depends on its ``forward``:

    - ``bbox`` and ``pixel_values`` (LayoutLMv3): the page image through the
      image processor (``apply_ocr`` off) and the words with 0-1000 boxes
      (:func:`dogood.core.boxes.normalize_box`) through the tokenizer;
    - ``bbox`` only (LiLT, LayoutLM): the words with 0-1000 boxes; BROS
      (``model_type == "bros"``) gets float boxes in [0, 1] (``x / width``,
      ``y / height``), which it scales by ``config.bbox_scale`` itself;
    - neither (BERT, RoBERTa, ...): the words only.

    Special and padding tokens get the box ``[0, 0, 0, 0]``.

    Parameters
    ----------
    name_or_path : str or Path
        Model folder or Hub id.
    labels : list of str or mapping, optional
        The dogood tag of each model label: names in id order, or a mapping
        from the model's label names (or ids) to tags. Needed when
        ``config.id2label`` is generic (``LABEL_0``...) or not FUNSD tags.
    device : str
        Torch device, e.g. ``"cpu"`` or ``"cuda"``.
    batch_size : int
        Chunks per forward pass.
    max_length : int
        Most sub-tokens per forward pass, special tokens included (capped by
        the tokenizer's ``model_max_length``). A longer document is cut into
        consecutive chunks of whole words that each fit; no word is dropped.
    box_level : {"segment", "word"}
        The box convention the model was fine-tuned with
        (:func:`dogood.core.schema.token_boxes`): ``segment`` (default; each word
        gets its entity's box, as the LayoutLMv3 FUNSD fine-tuning data) or
        ``word``. Feeding another convention than the model learned is a
        layout shift of its own.

    Notes
    -----
    Only token words (non-blank text) are fed, in order and with their text as
    the ``tokens`` column holds it (unstripped, as the LayoutLMv3 FUNSD
    example feeds it), so the ``tags`` of a prediction align with
    :func:`dogood.core.schema.iob_tags`. A word's tag is the
    label of its first sub-token and its confidence that label's softmax
    probability. A word that tokenizes to nothing is fed as the unknown token.
    """

    task = "token"
    _allowed = FUNSD_NER_TAGS
    _what = "FUNSD IOB tags"
    takes_boxes = property(_takes_boxes, doc="Whether the model is given word boxes (in ``box_level``).")

    def __init__(self, name_or_path: str | Path, labels=None, device: str = "cpu", batch_size: int = 8, max_length: int = 512,
                 box_level: str = "segment"):
        self.box_level = _check_box_level(box_level)
        super().__init__(name_or_path, labels, device, batch_size)
        if "input_ids" not in self.inputs:
            raise ModelError(f"model {self.name!r} takes no input_ids: not a text token classifier")
        self.float_boxes = self.model_type == "bros"
        self.takes_pixels = "pixel_values" in self.inputs
        tokenizer, self.image_processor = self._preprocessors(True, self.takes_pixels)
        tokenizer = tokenizer_with_prefix_space(tokenizer, self._source)
        self.encoder = _WordEncoder(tokenizer, self.inputs, self.float_boxes, int(max_length))
        self.tokenizer = tokenizer
        self.max_length = self.encoder.max_length

    def _auto_class(self):
        from transformers import AutoModelForTokenClassification

        return AutoModelForTokenClassification

    def predict(self, docs: Sequence[Document]) -> dict[str, Prediction]:
        """One prediction per document: an IOB tag and a confidence per token word."""
        docs = list(docs)
        _unique_ids(docs)
        tags: list[list[str | None]] = []
        confs: list[list[float]] = []
        items: list[tuple[int, int, list[str], list]] = []  # (document, first word, words, boxes)
        for di, doc in enumerate(docs):
            index, _ = iob_tags(doc)
            # the text as the dataset's `tokens` hold it (a FUNSD word may end in a space, which the byte-level
            # tokenizers of LayoutLMv3 and LiLT read as a sub-token of its own), as the fine-tuning scripts feed it
            words = [doc.words[i].text for i in index]
            boxes = [_word_box(b, doc.width, doc.height, self.float_boxes) for b in token_boxes(doc, self.box_level, index)]
            tags.append([None] * len(words))
            confs.append([0.0] * len(words))
            if not words:
                continue
            words, counts = self.encoder.prepare(words, boxes)
            for start, end in self.encoder.chunks(counts):
                items.append((di, start, words[start:end], boxes[start:end]))
        pixels: dict[int, Any] = {}
        for b in range(0, len(items), self.batch_size):
            batch = items[b : b + self.batch_size]
            inputs, word_ids = self.encoder.encode([it[2] for it in batch], [it[3] for it in batch])
            if self.takes_pixels:
                import torch

                for di in [k for k in pixels if k < batch[0][0]]:
                    del pixels[di]  # chunks come in document order: earlier pages are done
                for di in dict.fromkeys(it[0] for it in batch):
                    if di not in pixels:
                        pixels[di] = self._pixels([docs[di]])
                inputs["pixel_values"] = torch.cat([pixels[it[0]] for it in batch])
            probs = self._forward(inputs)
            best_p, best_i = probs.max(-1)
            for row, (di, start, _, _) in enumerate(batch):
                seen: set[int] = set()
                for t, wid in enumerate(word_ids[row]):
                    if wid is None or wid in seen:
                        continue
                    seen.add(wid)
                    tags[di][start + wid] = self.labels[int(best_i[row, t])]
                    confs[di][start + wid] = float(best_p[row, t])
        out: dict[str, Prediction] = {}
        for di, doc in enumerate(docs):
            if any(t is None for t in tags[di]):
                missing = tags[di].index(None)
                raise ModelError(f"model {self.name!r}: token word {missing} of document {doc.id!r} got no sub-token")
            out[doc.id] = Prediction(doc.id, tags=tuple(tags[di]), confidences=tuple(confs[di]))  # type: ignore[arg-type]
        return out


class HFDocumentClassifier(_HFModel):
    """A Hugging Face classification model as an RVL-CDIP classifier (``task == "document"``).

    Supported, by what the model's ``forward`` takes:

    - ``pixel_values`` only (``...ForImageClassification``: DiT, ViT, BEiT,
      ...): the page image through the model's image processor;
    - ``input_ids``, ``bbox`` and ``pixel_values``
      (``LayoutLMv3ForSequenceClassification``): the image, the token words
      and their 0-1000 boxes (:func:`dogood.core.boxes.normalize_box`), truncated
      to ``max_length`` sub-tokens; a layout model without image (LayoutLM,
      LiLT) gets words and boxes, BROS 0-1 boxes;
    - ``input_ids`` only (BERT, RoBERTa, ... ``ForSequenceClassification``):
      the token words joined by spaces, truncated to ``max_length``.

    Parameters
    ----------
    name_or_path : str or Path
        Model folder or Hub id.
    labels : list of str or mapping, optional
        The RVL-CDIP class of each model label: names in id order, or a
        mapping from the model's label names (or ids) to classes. Needed when
        ``config.id2label`` is generic or not RVL-CDIP class names.
    device : str
        Torch device.
    batch_size : int
        Documents per forward pass.
    max_length : int
        Most sub-tokens fed to a text or layout model (special tokens included).

    Notes
    -----
    ``Prediction.label`` is the class of the highest logit and
    ``Prediction.confidence`` its softmax probability.
    """

    task = "document"
    _allowed = RVL_CDIP_CLASSES
    _what = "RVL-CDIP classes"
    takes_boxes = property(_takes_boxes, doc="Whether the model is given word boxes (in ``box_level``).")

    def __init__(self, name_or_path: str | Path, labels=None, device: str = "cpu", batch_size: int = 8, max_length: int = 512,
                 box_level: str = "word"):
        self.box_level = _check_box_level(box_level)
        super().__init__(name_or_path, labels, device, batch_size)
        self.takes_pixels = "pixel_values" in self.inputs
        self.takes_text = "input_ids" in self.inputs
        if not (self.takes_pixels or self.takes_text):
            raise ModelError(f"model {self.name!r} takes neither pixel_values nor input_ids")
        tokenizer, self.image_processor = self._preprocessors(self.takes_text, self.takes_pixels)
        self.tokenizer = tokenizer
        self.encoder = None
        self.max_length = int(max_length)
        if self.takes_text:
            if "bbox" in self.inputs:
                self.encoder = _WordEncoder(tokenizer, self.inputs, self.model_type == "bros", self.max_length)
                self.max_length = self.encoder.max_length
            else:
                limit = getattr(tokenizer, "model_max_length", None)
                if isinstance(limit, int) and 0 < limit < 1_000_000:
                    self.max_length = min(self.max_length, limit)

    def _auto_class(self):
        from transformers import AutoModelForImageClassification, AutoModelForSequenceClassification
        from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES

        architectures = getattr(self.config, "architectures", None) or []
        if any(a.endswith("ForImageClassification") for a in architectures):
            return AutoModelForImageClassification
        if not architectures and self.config.model_type in MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES:
            return AutoModelForImageClassification
        return AutoModelForSequenceClassification

    def predict(self, docs: Sequence[Document]) -> dict[str, Prediction]:
        """One prediction per document: an RVL-CDIP class and its probability."""
        docs = list(docs)
        _unique_ids(docs)
        out: dict[str, Prediction] = {}
        for b in range(0, len(docs), self.batch_size):
            batch = docs[b : b + self.batch_size]
            inputs: dict[str, Any] = {}
            if self.takes_text:
                words_batch, boxes_batch = [], []
                for doc in batch:
                    index, _ = iob_tags(doc)
                    words_batch.append([doc.words[i].text.strip() for i in index])
                    boxes_batch.append([_word_box(b, doc.width, doc.height, self.model_type == "bros")
                                        for b in token_boxes(doc, self.box_level, index)])
                if self.encoder is not None:
                    inputs, _ = self.encoder.encode(words_batch, boxes_batch)
                else:
                    inputs = dict(
                        self.tokenizer(
                            [" ".join(words) for words in words_batch],
                            truncation=True,
                            max_length=self.max_length,
                            padding=True,
                            return_tensors="pt",
                        )
                    )
            if self.takes_pixels:
                inputs["pixel_values"] = self._pixels(batch)
            probs = self._forward(inputs)
            best_p, best_i = probs.max(-1)
            for row, doc in enumerate(batch):
                out[doc.id] = Prediction(doc.id, label=self.labels[int(best_i[row])], confidence=float(best_p[row]))
        return out
