"""What shifts need from disk, declared by name: a shift's ``prepare()`` asks for a resource here.

The shift contract (:class:`dogood.shifts.base.Shift`) keeps files, models
and programs out of ``apply`` and out of the shift modules' imports: a shift
names the resource it needs and :func:`resource` loads it, in ``prepare()``,
which the build calls once per process before any document. So the imports
go resources -> models (eval), never shifts -> models.

``RESOURCES[name]`` is the loader; :func:`register` adds one (a plugin may
add its own).

- ``token-scorer``: a token model of :func:`dogood.models.load_model`
  (``baseline``: dogood's CRF, trained on FUNSD train and cached on first use
  when missing), for ``move``'s strength scores.
- ``coco-photos``: the COCO photo pool of :func:`dogood.page.photos.coco_photos`
  (cached per process), for ``natural_background``.
- ``tesseract``: the installed Tesseract's version (:func:`dogood.page.ocr.tesseract_version`),
  for ``reocr``; fails with installation advice when Tesseract is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Every resource a shift may ask for, by name: its loader.
RESOURCES: dict[str, Callable[..., Any]] = {}


def register(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: register ``loader`` as resource ``name``."""

    def add(loader: Callable[..., Any]) -> Callable[..., Any]:
        RESOURCES[name] = loader
        return loader

    return add


def resource(name: str, **options: Any) -> Any:
    """Load resource ``name`` with ``options`` (the loader says what it caches)."""
    if name not in RESOURCES:
        raise KeyError(f"unknown resource {name!r}; known resources: {', '.join(sorted(RESOURCES))}")
    return RESOURCES[name](**options)


@register("token-scorer")
def token_scorer(spec: str) -> Any:
    """The token model ``spec`` names (``baseline``: trained and saved first when missing); not cached here."""
    from dogood.models import load_model

    if spec == "baseline":
        from dogood.models.baseline import default_baseline

        model = default_baseline()
    else:
        model = load_model(spec, task="token")
    if getattr(model, "task", "token") != "token":
        raise ValueError(f"the move scorer must tag words (a token model); {spec!r} is a {model.task} model")
    return model


@register("coco-photos")
def coco_pool(**options: Any) -> Any:
    """:func:`dogood.page.photos.coco_photos` with ``options`` (cached per process there)."""
    from dogood.page.photos import coco_photos

    return coco_photos(**options)


@register("tesseract")
def tesseract() -> str:
    """The installed Tesseract's version; :class:`~dogood.core.errors.SourceError` with advice when it is missing."""
    from dogood.page.ocr import tesseract_version

    return tesseract_version()
