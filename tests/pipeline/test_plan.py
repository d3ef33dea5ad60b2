"""A build prepares only the configs it builds, and a missing resource names the recipe, config and shift."""

from __future__ import annotations

import pytest

from dogood.core.errors import SourceError
from dogood.pipeline.build import build
from dogood.pipeline.recipe import parse_recipe


def recipe():
    return parse_recipe({
        "name": "needs-wordnet", "version": "1.0.0", "source": {"kind": "funsd"},
        "configs": {"plain": [{"shift": "char_deletion"}],
                    "synonym": [{"shift": "word_perturbation", "kind": "synonym"}]},
    })


def test_a_missing_resource_names_the_config_and_a_config_left_out_needs_none(funsd_dir, tmp_path, monkeypatch):
    from dogood.shifts.text import word_perturbation

    def no_wordnet(who, *resources):
        if "wordnet" in resources:
            raise SourceError("the NLTK data 'corpora/wordnet' is missing: python -m nltk.downloader wordnet")

    monkeypatch.setattr(word_perturbation, "require", no_wordnet)
    with pytest.raises(SourceError, match=r"recipe needs-wordnet, config 'synonym', shift 'word_perturbation': "
                                          r"the NLTK data 'corpora/wordnet' is missing"):
        build(recipe(), tmp_path / "out", source_path=funsd_dir, limit=1, progress=False)
    assert not (tmp_path / "out").exists()
    build(recipe(), tmp_path / "out", source_path=funsd_dir, limit=1, progress=False, configs=["plain"])
    assert [p.name for p in (tmp_path / "out" / "data").iterdir()] == ["plain"]
