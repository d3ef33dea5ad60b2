"""Parameter types for shift declarations: one pydantic model per shift (``Shift.Params``).

A shift declares each parameter once, as a field of its ``Params`` model: type,
range (``Field(ge=..., le=...)``), default and a one-line ``description``. That
declaration validates recipes (:func:`dogood.shifts.base.make_shift`), builds
the shift, and writes ``dogood describe``, the README's shift table and the
card's parameter lines. The types here read YAML values strictly: ``"false"``
is not a flag, ``"3"`` not a number, NaN and infinity are refused, and one
string where a list of strings is expected is a list of one (``labels:
answer``). Inspired by albumentations' per-transform ``InitSchema``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import AllowInfNan, BaseModel, BeforeValidator, ConfigDict, Strict


class Expect:
    """What a recipe value of this type must be, in words (for errors and ``describe``)."""

    def __init__(self, phrase: str):
        self.phrase = phrase

    def __repr__(self) -> str:
        return f"Expect({self.phrase!r})"


def _one_string_as_list(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


_StrictStr = Annotated[str, Strict()]
_StrictInt = Annotated[int, Strict()]

#: A number kept as given (an integer stays an integer): what most pixel and count knobs take.
Number = Annotated[_StrictInt | Annotated[float, Strict(), AllowInfNan(False)], Expect("a number")]
#: A number converted to float (``0`` becomes ``0.0``).
Real = Annotated[float, Strict(), AllowInfNan(False), Expect("a number")]
#: A whole number.
Integer = Annotated[_StrictInt, Expect("an integer")]
#: ``true`` or ``false``.
Flag = Annotated[bool, Strict(), Expect("true or false")]
#: A string.
Text = Annotated[str, Strict(), Expect("a string")]
#: One string or a list of them, kept as a tuple.
Names = Annotated[tuple[_StrictStr, ...], BeforeValidator(_one_string_as_list), Expect("a string or a list of strings")]
#: ``null``, one string or a list of them.
OptionalNames = Annotated[
    tuple[_StrictStr, ...] | None, BeforeValidator(_one_string_as_list), Expect("null, a string or a list of strings")
]
#: A list of whole numbers, kept as a tuple.
Integers = Annotated[tuple[_StrictInt, ...], Expect("a list of integers")]
#: A list of numbers, kept as a tuple.
Numbers = Annotated[tuple[_StrictInt | Annotated[float, Strict(), AllowInfNan(False)], ...], Expect("a list of numbers")]


class Params(BaseModel):
    """Base of every shift's parameter model: unknown names are errors, values are frozen once read."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)


def expected(field: Any) -> str:
    """The words for what a field takes (from its :class:`Expect` marker, else its annotation)."""
    for meta in getattr(field, "metadata", ()):
        if isinstance(meta, Expect):
            return meta.phrase
    annotation = getattr(field, "annotation", None)
    for meta in getattr(annotation, "__metadata__", ()):
        if isinstance(meta, Expect):
            return meta.phrase
    if get_origin(annotation) is Literal:
        return "one of " + ", ".join(map(str, get_args(annotation)))
    name = getattr(annotation, "__name__", None)
    return {"str": "a string", "int": "an integer", "float": "a number", "bool": "true or false"}.get(name, str(annotation))


def value_range(field: Any) -> str:
    """The field's range in words (``in [0, 1]``, ``≥ 0``, ``> 0 and ≤ 1``), or ``""`` when it has none."""
    low = high = None
    closed_low = closed_high = True
    for meta in getattr(field, "metadata", ()):
        for attr, closed in (("ge", True), ("gt", False)):
            if getattr(meta, attr, None) is not None:
                low, closed_low = getattr(meta, attr), closed
        for attr, closed in (("le", True), ("lt", False)):
            if getattr(meta, attr, None) is not None:
                high, closed_high = getattr(meta, attr), closed
    if low is not None and high is not None and closed_low and closed_high:
        return f"in [{low}, {high}]"
    parts = []
    if low is not None:
        parts.append(f"{'≥' if closed_low else '>'} {low}")
    if high is not None:
        parts.append(f"{'≤' if closed_high else '<'} {high}")
    return " and ".join(parts)


_RANGE_ERRORS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}


def problem(model: type[BaseModel], error: dict[str, Any], given: dict[str, Any]) -> str:
    """One pydantic error as the recipe's words: ``parameter p must be in [0, 1], got 2``."""
    loc = [part for part in error.get("loc", ()) if isinstance(part, str)]
    name = loc[0] if loc else "?"
    field = model.model_fields.get(name) or next(
        (f for f in model.model_fields.values() if name in alias_names(f)), None)
    got = given.get(name, error.get("input"))
    kind = error.get("type", "")
    if kind == "extra_forbidden":
        return f"has no parameter {name}"
    if kind == "value_error":
        return f"parameter {name}: {str(error.get('ctx', {}).get('error', error.get('msg', '')))}"
    if kind in _RANGE_ERRORS and field is not None and value_range(field):
        return f"parameter {name} must be {value_range(field)}, got {got!r}"
    return f"parameter {name} must be {expected(field) if field is not None else 'valid'}, got {got!r}"


def alias_names(field: Any) -> list[str]:
    """The names a recipe may use for a field besides its own (its old names), from its ``validation_alias``."""
    alias = getattr(field, "validation_alias", None)
    if alias is None:
        return []
    if isinstance(alias, str):
        return [alias]
    return [c for c in getattr(alias, "choices", ()) if isinstance(c, str)]


def accepted_names(model: type[BaseModel]) -> list[str]:
    """Every name a recipe may use: the fields, then their old names (aliases)."""
    names = list(model.model_fields)
    for field in model.model_fields.values():
        names += [a for a in alias_names(field) if a not in names]
    return names
