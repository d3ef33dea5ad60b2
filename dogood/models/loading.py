"""Loading Hugging Face models by Hub id or local folder: what the eval adapters (:mod:`dogood.models.hf`)
and the shifts that use a model (``bert_attack``) share.

transformers is imported only when a config or tokenizer is loaded.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from dogood.models.base import ModelError

__all__ = ["is_local_model", "load_hf_config", "model_source", "tokenizer_with_prefix_space"]


def is_local_model(name: str) -> bool:
    """Whether ``name`` names a local folder (it exists, or looks like a path) rather than a Hub model id."""
    path = Path(name).expanduser()
    return path.exists() or name.startswith((".", "/", "~", "\\")) or name.count("/") > 1 or path.is_absolute()


def model_source(name: str) -> str:
    """What ``from_pretrained`` is given for ``name``: the folder, ``~`` expanded, or the Hub id."""
    return str(Path(name).expanduser()) if is_local_model(name) else name


def load_hf_config(name: str):
    """The ``transformers`` config of a model folder or Hub id; a :class:`ModelError` naming it when there is none."""
    from transformers import AutoConfig

    if is_local_model(name):
        path = Path(name).expanduser()
        if not path.is_dir():
            raise ModelError(f"model {name!r} does not exist (expected a Hugging Face model folder)")
        if not (path / "config.json").is_file():
            raise ModelError(f"model {name!r} is not a Hugging Face model folder: it has no config.json")
        name = str(path)
    try:
        return AutoConfig.from_pretrained(name)
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot load Hugging Face model {name!r}: {exc}") from exc


def tokenizer_with_prefix_space(tokenizer, source: str):
    """``tokenizer``, loaded again from ``source`` with ``add_prefix_space=True`` when it is a byte-level BPE
    (RoBERTa...) that needs it for pre-split words."""
    takes_boxes = "boxes" in inspect.signature(tokenizer.__call__).parameters
    if getattr(tokenizer, "add_prefix_space", None) is False and not takes_boxes:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(source, use_fast=True, add_prefix_space=True)
    return tokenizer
