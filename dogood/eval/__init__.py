"""Scoring models ID against OOD: datasets, tasks, the run, bootstrap intervals, the report, metrics.

- :mod:`dogood.eval.datasets`: what ``--id``/``--ood`` name (built folders, Hub ids, source kinds);
- :mod:`dogood.eval.tasks`: one module per task (token, document, qa, ocr, layout) behind one protocol;
- :mod:`dogood.eval.run`: :func:`evaluate`, paired by document (:mod:`dogood.eval.pairing`);
- :mod:`dogood.eval.bootstrap`: intervals over documents;
- :mod:`dogood.eval.report`: :class:`EvalReport`, the data; :mod:`dogood.eval.writers`: Markdown, CSV, JSON, plots;
- :mod:`dogood.eval.compare`: two models on the same documents;
- :mod:`dogood.eval.metrics`, :mod:`dogood.eval.kieval`, :mod:`dogood.eval.robustness`, :mod:`dogood.eval.rodla`:
  the papers' metrics;
- :mod:`dogood.models.predictions`, :mod:`dogood.models.coco_results`: predictions made elsewhere.
"""

from dogood.eval.bootstrap import (
           bootstrap_values,
           bootstrap_weights,
           percentile_interval,
)
from dogood.eval.datasets import EvalDataset, EvalError, as_datasets, resolve_datasets
from dogood.eval.report import EvalReport
from dogood.eval.run import blind_spot, evaluate, families_of, model_sees
from dogood.eval.tasks import TASKS

__all__ = ["EvalDataset", "EvalError", "EvalReport", "TASKS", "as_datasets", "blind_spot", "bootstrap_values",
           "bootstrap_weights", "evaluate", "families_of", "model_sees", "percentile_interval", "resolve_datasets"]
