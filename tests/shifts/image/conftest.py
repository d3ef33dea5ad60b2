"""Fixtures the image shifts' tests share: FUNSD forms and a small funsd-p build."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def forms(funsd_test):
    """The first 3 FUNSD test forms."""
    return [funsd_test.load(i) for i in funsd_test.ids()[:3]]


@pytest.fixture(scope="module")
def funsd_p(funsd_dir, tmp_path_factory):
    """``funsd-p`` built on one FUNSD test form: every perturbation at every level."""
    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import load_recipe

    out = tmp_path_factory.mktemp("funsd-p") / "funsd-p"
    build(load_recipe("funsd-p"), out, source_path=funsd_dir, limit=1)
    return out
