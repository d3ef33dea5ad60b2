"""Seeds: every random draw in a build comes from a seed hashed from what it is for.

A leaf module (no dogood imports), so shifts, recipes and the pipeline can all
use it without import cycles.

A shift step's seed is hashed from the recipe seed, the document id, the
step's position in its chain and the step's content (the shift's name and its
full parameters, defaults included), never from the config's name. Two
configs whose chains share a prefix therefore draw the same numbers for that
prefix and produce identical pixels up to the first step where they differ:
``natural`` (``natural_background`` then ``reocr``) and ``natural_kept_words``
(``natural_background`` alone) composite the same ink on the same photo, so
the pair measures re-OCR alone (Do-GOOD 4.3).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def derive_seed(*parts: Any) -> int:
    """A 63-bit integer hashed from ``parts`` (stable across runs, machines and Python versions)."""
    digest = hashlib.sha256(json.dumps([str(p) for p in parts]).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def step_key(shift_name: str, params: Mapping[str, Any]) -> str:
    """A chain step's content as canonical JSON: the shift's name and its full parameters."""
    return json.dumps({"shift": shift_name, "params": dict(params)}, sort_keys=True, default=str)


def step_seed(recipe_seed: int, doc_id: str, position: int, key: str, copy: int = 0) -> int:
    """The seed of step ``position`` (0-based) of a chain on one document; ``key`` from :func:`step_key`.

    ``copy`` is the copy index of a build with ``copies: k`` (:mod:`dogood.pipeline.recipe`): copy 0 draws what a
    one-copy build draws (the copy index enters the hash only from copy 1 on), each later copy its own numbers.
    """
    if copy:
        return derive_seed("step", recipe_seed, doc_id, position, key, "copy", copy)
    return derive_seed("step", recipe_seed, doc_id, position, key)


def shared_prefixes(chains: Mapping[str, list[str]]) -> dict[str, dict[str, int]]:
    """For each config, the other configs it shares draws with and for how many leading steps.

    ``chains`` maps a config to its steps' keys (:func:`step_key`); the result
    maps a config to ``{other config: number of leading steps in common}``,
    leaving out configs that share none.
    """
    out: dict[str, dict[str, int]] = {}
    for a, keys_a in chains.items():
        shared = {}
        for b, keys_b in chains.items():
            if a == b:
                continue
            n = 0
            while n < min(len(keys_a), len(keys_b)) and keys_a[n] == keys_b[n]:
                n += 1
            if n:
                shared[b] = n
        out[a] = shared
    return out
