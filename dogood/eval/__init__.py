"""Scoring models ID against OOD: datasets, the run, bootstrap intervals, the report, metrics.

- :mod:`dogood.eval.datasets`: what ``--id``/``--ood`` name (built folders, Hub ids, source kinds);
- :mod:`dogood.eval.run`: :func:`evaluate`, paired by document;
- :mod:`dogood.eval.bootstrap`: intervals over documents;
- :mod:`dogood.eval.report`: :class:`EvalReport` as markdown, CSV, JSON and a plot;
- :mod:`dogood.eval.metrics`, :mod:`dogood.eval.kieval`, :mod:`dogood.eval.robustness`: the papers' metrics;
- :mod:`dogood.models.predictions`: predictions made elsewhere (JSONL).
"""

from dogood.eval.bootstrap import bootstrap_values, bootstrap_weights, percentile_interval
from dogood.eval.datasets import EvalDataset, EvalError, as_datasets, resolve_datasets
from dogood.eval.report import EvalReport
from dogood.eval.run import blind_spot, evaluate, families_of, model_sees

__all__ = ["EvalDataset", "EvalError", "EvalReport", "as_datasets", "blind_spot", "bootstrap_values",
           "bootstrap_weights", "evaluate", "families_of", "model_sees", "percentile_interval", "resolve_datasets"]
