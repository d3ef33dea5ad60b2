"""Old import paths of moved modules, kept importable with a :class:`DeprecationWarning`.

dogood 0.3 grouped its modules by role (``dogood.errors`` became :mod:`dogood.core.errors`, ``dogood.schema``
:mod:`dogood.core.schema`, ``dogood.metrics`` :mod:`dogood.eval.metrics`, ...). Code written against the old
paths keeps working: importing one warns once, naming the new path, and gives the very module (same classes,
so ``isinstance`` and ``except`` hold). The standard way to alias a module is an import hook (``importlib``'s
meta path finder protocol); no library does this for a package's own moved modules, hence the few lines here.
They will be removed in a later release.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

#: Old module path -> where it lives now (a ``dogood.text`` submodule maps by its prefix).
MOVED = {
    "dogood.boxes": "dogood.core.boxes", "dogood.document": "dogood.core.document",
    "dogood.download": "dogood.core.downloads", "dogood.errors": "dogood.core.errors",
    "dogood.papers": "dogood.core.papers", "dogood.paths": "dogood.core.paths",
    "dogood.progress": "dogood.core.progress", "dogood.schema": "dogood.core.schema",
    "dogood.seeds": "dogood.core.seeds", "dogood.models.loading": "dogood.core.hub",
    "dogood.kieval": "dogood.eval.kieval", "dogood.metrics": "dogood.eval.metrics",
    "dogood.robustness": "dogood.eval.robustness", "dogood.text": "dogood.language",
    "dogood.box_ink": "dogood.measures.box_ink", "dogood.docdiff": "dogood.measures.diff",
    "dogood.severity": "dogood.measures.effects", "dogood.halo": "dogood.measures.halo",
    "dogood.preview": "dogood.measures.preview", "dogood.models.hf": "dogood.models.hf_model",
    "dogood.predictions": "dogood.models.predictions", "dogood.augraphy_seeded": "dogood.page.augraphy_seeded",
    "dogood.capture": "dogood.page.camera", "dogood.ink": "dogood.page.ink", "dogood.ocr": "dogood.page.ocr",
    "dogood.coco": "dogood.page.photos", "dogood.render": "dogood.page.render", "dogood.warp": "dogood.page.warp",
    "dogood.recipe": "dogood.pipeline.recipe", "dogood.safety": "dogood.pipeline.safety",
    "dogood.stats": "dogood.pipeline.stats", "dogood.export": "dogood.share.export",
    "dogood.gallery": "dogood.share.gallery", "dogood.publish": "dogood.share.publish",
    "dogood.describe": "dogood.shifts.describe", "dogood.resources": "dogood.shifts.resources",
    "dogood.sources.hf": "dogood.sources.hf_dataset", "dogood.rows": "dogood.sources.rows",
}


def new_name(old: str) -> str | None:
    """Where the module ``old`` lives now, or ``None`` when it did not move."""
    if old in MOVED:
        return MOVED[old]
    head, _, tail = old.rpartition(".")
    while head:
        if head in MOVED:
            return f"{MOVED[head]}.{old[len(head) + 1:]}"
        head, _, _ = head.rpartition(".")
    return None


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, old: str, new: str):
        self.old, self.new = old, new

    def create_module(self, spec):
        warnings.warn(f"{self.old} moved to {self.new}; import it from there (the old path will be removed)",
                      DeprecationWarning, stacklevel=8)
        return importlib.import_module(self.new)

    def exec_module(self, module):
        sys.modules[self.old] = module  # the very module: one set of classes under both names


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("dogood."):
            return None
        new = new_name(fullname)
        if new is None or importlib.util.find_spec(new) is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(fullname, new))


def install() -> None:
    """Make the old paths importable (once per process). The finder goes first: a submodule of an old package
    path (``dogood.text.chars``) must be the new module itself, never a second copy the path finder would make
    from the aliased package's folder; it answers only for :data:`MOVED` paths."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())
