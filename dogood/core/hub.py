"""Loading Hugging Face models by Hub id or local folder: what the eval adapters (:mod:`dogood.models.hf_model`)
and the shifts that use a model (``bert_attack``) share. In ``core`` so that a shift never imports :mod:`dogood.models`.

transformers is imported only when a config or tokenizer is loaded.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from dogood.core.errors import ModelError

__all__ = ["HubUnreachable", "check_hub_model", "hub_options", "hub_unreachable", "is_local_model", "load_hf_config",
           "model_source", "tokenizer_with_prefix_space"]

#: Seconds the one reachability probe of the Hub waits (no retries).
HUB_PROBE_TIMEOUT = 3.0
_PROBED: dict[str, str | None] = {}


class HubUnreachable(ModelError):
    """A Hub model id that is not in the local cache while the Hugging Face Hub cannot be reached."""

    def __init__(self, message: str, model: str | None = None):
        super().__init__(message)
        self.model = model


def hub_unreachable() -> str | None:
    """Why the Hugging Face Hub cannot be reached now (``HF_HUB_OFFLINE`` set, or the probe's error), else ``None``.

    One ``HEAD`` of the endpoint with a short timeout and no retries, once per process and endpoint:
    ``from_pretrained`` would otherwise retry for about 40 s before it fails or falls back to the cache.
    """
    import os

    import requests
    from huggingface_hub import constants

    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(name, "").upper() in ("1", "ON", "YES", "TRUE") or (name == "HF_HUB_OFFLINE"
                                                                           and constants.HF_HUB_OFFLINE):
            return f"{name} is set"
    endpoint = constants.ENDPOINT
    if endpoint not in _PROBED:
        try:
            requests.head(endpoint, timeout=HUB_PROBE_TIMEOUT, allow_redirects=False)
            _PROBED[endpoint] = None
        except requests.RequestException as exc:
            reason = getattr(exc, "args", [None])[0]
            reason = getattr(reason, "reason", reason)
            _PROBED[endpoint] = f"{endpoint}: {type(exc).__name__}: {str(reason or exc)[:160]}"
    return _PROBED[endpoint]


def _cached(name: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    try:
        return isinstance(try_to_load_from_cache(name, "config.json"), str)
    except ValueError:  # not a valid repo id
        return False


def check_hub_model(name: str) -> None:
    """Raise :class:`HubUnreachable` at once when ``name`` is a Hub id, not cached, and the Hub cannot be reached."""
    if is_local_model(name) or _cached(name):
        return
    why = hub_unreachable()
    if why is not None:
        raise HubUnreachable(f"the model {name!r} is not on this machine and the Hugging Face Hub cannot be reached "
                             f"({why})", model=name)


def hub_options(name: str) -> dict:
    """Extra ``from_pretrained`` options for ``name``: ``local_files_only`` when it is a Hub id and the Hub cannot
    be reached (the cached copy is used at once, not after retries); :class:`HubUnreachable` when none is cached."""
    if is_local_model(name):
        return {}
    check_hub_model(name)
    return {"local_files_only": True} if hub_unreachable() else {}


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
    options = hub_options(name)
    try:
        return AutoConfig.from_pretrained(name, **options)
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot load Hugging Face model {name!r}: {exc}") from exc


def tokenizer_with_prefix_space(tokenizer, source: str):
    """``tokenizer``, loaded again from ``source`` with ``add_prefix_space=True`` when it is a byte-level BPE
    (RoBERTa...) that needs it for pre-split words."""
    takes_boxes = "boxes" in inspect.signature(tokenizer.__call__).parameters
    if getattr(tokenizer, "add_prefix_space", None) is False and not takes_boxes:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(source, use_fast=True, add_prefix_space=True, **hub_options(source))
    return tokenizer
