"""What every model kind shares: the :class:`Model` protocol, :class:`ModelError`, where the baselines are saved."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from dogood.core.document import Document
from dogood.core.errors import ModelError  # noqa: F401 (re-exported: dogood.models.base.ModelError)
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


def default_baseline_path(box_level: str = "record") -> Path:
    """Where the CRF baseline reading ``box_level`` boxes is saved by default: ``dogood train-baseline
    --box-level segment|word`` writes, and ``dogood eval --model baseline`` loads, the one of the data's
    convention (``funsd-baseline-<level>.dogood-model``); ``record``, the Move shift's scorer, is
    ``funsd-baseline.dogood-model`` (the file of dogood versions before conventions)."""
    name = "funsd-baseline.dogood-model" if box_level == "record" else f"funsd-baseline-{box_level}.dogood-model"
    return cache_dir() / "models" / name


def default_document_baseline_path() -> Path:
    """Where ``dogood train-baseline --task document`` saves, and ``--model baseline`` loads for a
    document-classification dataset, the document baseline by default."""
    return cache_dir() / "models" / "rvl-cdip-baseline.dogood-model"
