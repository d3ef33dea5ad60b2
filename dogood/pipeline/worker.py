"""One document through every config's chain, to rows and statistics: what a pool process or a Ray actor runs.

A worker is initialised once with a :class:`WorkerSpec` (:func:`init_worker`),
then :func:`process_task` handles one ``(split, index, doc_id)`` task at a time.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass

from dogood.core.document import Document
from dogood.core.errors import DogoodError
from dogood.core.schema import document_to_row
from dogood.core.seeds import step_seed
from dogood.measures.factors import SourcePage
from dogood.page.ocr import release_engines, tesseract_runs
from dogood.pipeline.stats import document_stats
from dogood.sources import Source

#: ``(split, index in the split, document id)``
Task = tuple[str, int, str]
#: ``(split, index, doc_id, {config: [(row, stats), one per copy]} or None, (message, traceback or None) or None,
#: (pages Tesseract read, seconds))``: the last field counts OCR done for this task (cache misses)
TaskResult = tuple[str, int, str, dict | None, tuple | None, tuple[int, float]]


@dataclass
class WorkerSpec:
    """What every worker (a pool process or a Ray actor) needs: sources, chains, seed, schema, box convention,
    copies per document."""

    sources: dict[str, Source]
    chains: dict[str, list]
    seed: int
    schema: str
    box_level: str
    copies: int = 1
    labels: tuple[str, ...] | None = None  # FUNSD-style: the entity labels naming ``ner_tags`` (default FUNSD's)
    measured: frozenset[str] = frozenset()  # severity configs, whose statistics add the measured effects
    quads: bool = False  # every word's quad carried through the shifts and written (``quads: true``)


_WORKER: dict[str, WorkerSpec] = {}


def init_worker(spec: WorkerSpec) -> None:
    """Make ``spec`` the one this process's :func:`process_task` uses."""
    _WORKER["spec"] = spec


def release_worker() -> None:
    """Forget the spec :func:`init_worker` set, and end this process's in-process Tesseract engines."""
    _WORKER.clear()
    release_engines()


def apply_chain(doc: Document, chain, recipe_seed: int, copy: int = 0) -> Document:
    """Apply a chain of shifts to one document, step k seeded by :func:`dogood.core.seeds.step_seed`.

    The seeds depend on the recipe seed, the document id and each step's
    position and content (:meth:`~dogood.shifts.base.Shift.seed_key`: a severity level's step draws what its
    config's own step draws), not on the config's name, so configs whose chains share a prefix draw the same
    numbers for it. ``copy`` (of a build with
    ``copies: k``) draws that copy's numbers; copy 0 draws those of a one-copy build.
    """
    doc_id = doc.id
    for k, shift in enumerate(chain):
        doc = shift(doc, step_seed(recipe_seed, doc_id, k, shift.seed_key(), copy))
    return doc


def copy_id(doc_id: str, copy: int, copies: int) -> str:
    """The row id of copy ``copy`` of a document: ``<doc_id>#<copy>`` when a build writes several, else the id."""
    return f"{doc_id}#{copy}" if copies > 1 else doc_id


def process_task(task: Task) -> TaskResult:
    """Load one document, apply every config's chain (once per copy), make each config's rows and statistics.

    A failure comes back as ``(message, traceback)`` in the last field, the
    traceback only for an unexpected error (a bug or a library's).
    """
    return process_document(task, None)


def process_document(task: Task, doc: Document | None) -> TaskResult:
    """:func:`process_task` of a document already read (``None``: load it by id), e.g. from a source's
    ``read_slice``; OCR counts only what runs here."""
    pages, seconds = tesseract_runs()
    split, index, doc_id, rows, error = _process(task, doc)
    pages_after, seconds_after = tesseract_runs()
    return split, index, doc_id, rows, error, (pages_after - pages, seconds_after - seconds)


def _process(task: Task, doc: Document | None = None) -> tuple:
    split, index, doc_id = task
    spec = _WORKER["spec"]
    try:
        if doc is None:
            doc = spec.sources[split].load(doc_id)
        doc.image.check_pixels()  # decoded once: undecodable pixel data is never written
        if spec.quads:
            doc = doc.with_quads()
        source_page = SourcePage(doc)  # what the factor measures read of the source, once for every config
        results = {}
        for config, chain in spec.chains.items():
            results[config] = []
            for copy in range(spec.copies):
                shifted = apply_chain(doc, chain, spec.seed, copy)
                if shifted.image is not doc.image:
                    shifted.image.check_pixels()
                if spec.copies > 1:
                    shifted = shifted.replace(id=copy_id(doc_id, copy, spec.copies))
                row = document_to_row(shifted, spec.schema, spec.box_level, spec.labels, quads=spec.quads)
                stats = document_stats(doc, shifted, row, spec.schema, spec.labels, measure=config in spec.measured,
                                       source_page=source_page, box_level=spec.box_level)
                results[config].append((row, stats))
        return split, index, doc_id, results, None
    except DogoodError as exc:
        return split, index, doc_id, None, (str(exc), None)
    except Exception as exc:  # a bug or an unexpected library error: keep the traceback
        return split, index, doc_id, None, (f"{type(exc).__name__}: {exc}", traceback.format_exc())
