"""What every model kind shares: the :class:`Model` protocol, :class:`ModelError`, where the baselines are saved."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from dogood.core.document import Document
from dogood.core.errors import ModelError
from dogood.core.paths import cache_dir
from dogood.models.predictions import Prediction


@runtime_checkable
class Model(Protocol):
    """What ``dogood eval`` and the Move shift need of a model."""

    name: str
    task: str
    # Optional: ``sees``, the inputs the model is given, a set of "text", "layout" and "image" (the baseline
    # sees text and layout; Hugging Face adapters derive it from their forward inputs). dogood eval uses it to
    # flag OOD sets whose shifts change only what the model cannot see.

    def predict(self, docs: Sequence[Document]) -> dict[str, Prediction]:
        """One prediction per document, keyed by document id."""
        ...


def default_baseline_path() -> Path:
    """Where ``dogood train-baseline`` saves, and ``--model baseline`` loads, the baseline by default."""
    return cache_dir() / "models" / "funsd-baseline.dogood-model"


def default_document_baseline_path() -> Path:
    """Where ``dogood train-baseline --task document`` saves, and ``--model baseline`` loads for a
    document-classification dataset, the document baseline by default."""
    return cache_dir() / "models" / "rvl-cdip-baseline.dogood-model"
