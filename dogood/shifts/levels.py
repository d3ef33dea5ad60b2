"""Severity levels 1-5, in the ImageNet-C tradition: a recipe's ``severities:`` key, and what each level sets.

A shift declares its levels in its own file (:attr:`dogood.shifts.base.Shift.severities`: level -> the values
of some of its parameters). A recipe's top-level ``severities: [1, 2, 3, 4, 5]`` (or a subset) turns every
config whose chain has a shift with levels into configs ``<config>@<s>``, in which each such step takes level
``s``'s values over the config's own (:func:`expand_severities`); other configs stay as they are.

A level is defined by what it does to the data, not by its knob alone: a build measures each severity config
on every document (:mod:`dogood.measures.effects`) and the card states the measured effect per level.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dogood.core.errors import RecipeError

#: The levels a recipe may ask for.
LEVELS = (1, 2, 3, 4, 5)
#: What joins a config's name and its level: ``merge@3``.
SEP = "@"


def check_levels(value: Any, where: str = "recipe") -> list[int]:
    """A recipe's ``severities:`` value as a list of distinct levels from :data:`LEVELS`, in the order given."""
    levels = [value] if isinstance(value, int) and not isinstance(value, bool) else value
    if (not isinstance(levels, list) or not levels or len(set(levels)) != len(levels)
            or not all(isinstance(s, int) and not isinstance(s, bool) and s in LEVELS for s in levels)):
        raise RecipeError(f"{where}: severities must be a list of distinct levels from 1 to 5, e.g. [1, 2, 3, 4, 5], "
                          f"got {value!r}")
    return levels


def swept(step: Mapping[str, Any]) -> bool:
    """Whether a chain step's shift has severity levels."""
    from dogood.shifts import SHIFTS

    cls = SHIFTS.get(step.get("shift", "")) if isinstance(step, Mapping) else None
    return bool(cls is not None and cls.severities)


def level_chain(chain: list[dict[str, Any]], level: int) -> list[dict[str, Any]]:
    """``chain`` at ``level``: every step whose shift has levels takes that level's values over its own."""
    from dogood.shifts import SHIFTS

    out = []
    for step in chain:
        if swept(step):
            values = SHIFTS[step["shift"]].severities.get(level)
            if values is None:
                raise RecipeError(f"shift {step['shift']!r} has no severity level {level} (it has "
                                  f"{', '.join(map(str, sorted(SHIFTS[step['shift']].severities)))})")
            step = {**step, **values}
        out.append(dict(step))
    return out


def expand_severities(levels: list[int], configs: dict[str, list[dict[str, Any]]],
                      where: str = "recipe") -> tuple[dict[str, list[dict[str, Any]]], dict[str, tuple[str, int]]]:
    """The configs with every config that has a swept step replaced by ``<config>@<s>`` for each level ``s``, in
    the recipe's order; and ``{"<config>@<s>": (config, s)}``."""
    out: dict[str, list[dict[str, Any]]] = {}
    origin: dict[str, tuple[str, int]] = {}
    for name, chain in configs.items():
        if not any(swept(step) for step in chain):
            out[name] = chain
            continue
        for level in levels:
            new = f"{name}{SEP}{level}"
            if new in configs or new in out:
                raise RecipeError(f"{where}: severity config {new!r} is already a config")
            try:
                out[new] = level_chain(chain, level)
            except RecipeError as exc:
                raise RecipeError(f"{where}, config {name!r}: {exc}") from None
            origin[new] = (name, level)
    return out, origin


def base_name(config: str) -> tuple[str, int | None]:
    """``("merge", 3)`` for ``merge@3``; ``(config, None)`` for a name without a level."""
    base, sep, level = config.rpartition(SEP)
    return (base, int(level)) if sep and level.isdigit() else (config, None)


def level_rows(cls: type) -> list[tuple[int, str]]:
    """A shift's levels as ``(level, "param=value, ...")`` rows (``dogood describe``, the card)."""
    return [(level, ", ".join(f"{k}={_shown(v)}" for k, v in values.items()))
            for level, values in sorted(cls.severities.items())]


def _shown(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(map(_shown, value)) + "]"
    return f"{value:g}" if isinstance(value, float) else str(value)
