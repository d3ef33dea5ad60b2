"""Moved modules keep their old import paths (issue 36): ``dogood.errors``, ``dogood.schema`` and the other modules
of dogood's first layout import, with a DeprecationWarning naming the new path, as the very new module."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from dogood.core.aliases import MOVED, new_name


@pytest.mark.parametrize("old", sorted(MOVED))
def test_every_old_path_imports_as_the_new_module_with_a_warning(old):
    code = ("import importlib, warnings, sys\n"
            "import dogood\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always')\n"
            f"    old = importlib.import_module({old!r})\n"
            f"new = importlib.import_module({MOVED[old]!r})\n"
            "assert old is new, (old, new)\n"
            f"assert any(issubclass(w.category, DeprecationWarning) and {MOVED[old]!r} in str(w.message) "
            "for w in caught), [str(w.message) for w in caught]\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_old_names_give_the_same_classes_and_submodules():
    import dogood  # noqa: F401  (installs the aliases)

    with pytest.warns(DeprecationWarning, match="dogood.core.errors"):
        errors = importlib.import_module("dogood.errors")
    from dogood.core.errors import DocumentError

    assert errors.DocumentError is DocumentError
    with pytest.warns(DeprecationWarning):
        chars = importlib.import_module("dogood.text.chars")
    assert chars is importlib.import_module("dogood.language.chars")
    assert new_name("dogood.text.words") == "dogood.language.words" and new_name("dogood.core.errors") is None
    with pytest.raises(ImportError):
        importlib.import_module("dogood.no_such_module")
