"""Which dogood extra brings which optional package, and the one install line to give for it.

A missing optional package is named with the extra that installs it, never as a bare package: ``pip install
"dogood[text]"`` resolves TextAttack together with the versions dogood pins beside it (a bare ``pip install
textattack`` sent pip backtracking for over 15 minutes), and ``dogood[scan]`` brings augraphy with numba and
scikit-image (installing augraphy with ``--no-deps`` left numba broken). Extras are declared in ``pyproject.toml``.
"""

from __future__ import annotations

import importlib.util

from dogood.core.errors import DogoodError

#: Importable module -> the extra that installs it.
EXTRA_OF = {
    "textattack": "text", "transformers": "hf", "torch": "hf", "augraphy": "scan", "numba": "scan",
    "skimage": "scan", "ray": "distributed", "tesserocr": "ocr", "psutil": "bench",
    "textblob_aptagger": "pos", "rapidocr": "ocr-neural", "onnxruntime": "ocr-neural", "pyrtools": "rodla",
}


class MissingDependency(DogoodError):
    """An optional package is not installed; the message names the extra that installs it."""


def install_line(extra: str | None) -> str:
    """``pip install "dogood[text]"`` (from a source checkout: ``pip install -e ".[text]"``); dogood itself when
    ``extra`` is ``None`` (a package dogood always depends on)."""
    if extra is None:
        return 'pip install dogood (its own dependencies; from a source checkout: pip install -e .)'
    return f'pip install "dogood[{extra}]" (from a source checkout: pip install -e ".[{extra}]")'


def have(module: str) -> bool:
    """Whether ``module`` can be imported (found on the path; not imported)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing(who: str, module: str, extra: str | None = None, detail: str = "") -> MissingDependency:
    """The error to raise when ``who`` needs ``module``: it names the extra (``extra``, else :data:`EXTRA_OF`)."""
    extra = extra or EXTRA_OF.get(module)
    why = f" ({detail})" if detail else ""
    return MissingDependency(f"{who} needs the Python package {module}{why}: {install_line(extra)}")


def require_module(module: str, who: str, extra: str | None = None):
    """Import ``module``, or raise :class:`MissingDependency` naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise missing(who, module, extra, "" if isinstance(exc, ModuleNotFoundError) else str(exc)) from None
