"""The evaluation tasks, one module each, registered by name (:data:`TASKS`): ``token``, ``document``, ``qa``,
``ocr`` and ``layout``. :mod:`dogood.eval.tasks.base` holds the protocol. Every module of this package is imported
here, so a new task is one module (a :class:`Task` subclass under :func:`register`) and one test file."""

import importlib
import pkgutil

from dogood.eval.tasks.base import TASKS, Scored, Task, TaskError, make_task, register

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base":
        importlib.import_module(f"{__name__}.{_module.name}")  # each registers its task

__all__ = ["TASKS", "Scored", "Task", "TaskError", "make_task", "register"]
