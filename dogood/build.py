"""``dogood.build``, kept for scripts that import from it: the build lives in :mod:`dogood.pipeline`."""

from dogood.pipeline.build import BuildError, BuildReport, build
from dogood.pipeline.worker import WorkerSpec, apply_chain

__all__ = ["BuildError", "BuildReport", "WorkerSpec", "apply_chain", "build"]
