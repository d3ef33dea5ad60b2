"""One document through its configs' chains, to rows and statistics: what a pool process or a Ray actor runs.

A worker is initialised once with a :class:`WorkerSpec` (:func:`init_worker`), then :func:`process_task` handles
one task at a time: a document (``(split, index, doc_id)``, every config) or a document and one group of configs
(``(split, index, doc_id, group)``, :attr:`WorkerSpec.groups`), so that a build of few documents and many configs
still keeps every worker busy. Each config's rows leave the worker as one Arrow table (the rows of its copies,
made here, not in the driver) with the statistics of each row.

Every per-config measure of a document runs here, in the worker, in :func:`measure_config` (the factor table's
counts, a severity level's effects): the driver only adds up what comes back. The card's preview of each config
is drawn here too, from the rows' own shifted page, by the worker that shifts the first document.
"""

from __future__ import annotations

import io
import time
import traceback
from dataclasses import dataclass
from typing import Any, NamedTuple

from dogood.core.document import Document
from dogood.core.errors import DogoodError
from dogood.core.schema import document_to_row
from dogood.core.seeds import step_seed
from dogood.measures.factors import SourcePage
from dogood.page.ocr import release_engines, tesseract_runs
from dogood.pipeline import timeline
from dogood.pipeline.stats import document_stats
from dogood.sources import Source

#: ``(split, index in the split, document id)``: one document, every config
Task = tuple[str, int, str]
#: ``(split, index, document id, group)``: one document, the configs of :attr:`WorkerSpec.groups` ``[group]``
Unit = tuple[str, int, str, int]


class TaskResult(NamedTuple):
    """What a task gives back: per config, its rows (a ``pyarrow.Table``, one row per copy) and each row's
    statistics; or the failure ``(message, traceback or None)``; the OCR this task ran (pages Tesseract read,
    seconds: cache misses); the previews drawn (config -> JPEG bytes); the worker's timeline spans (when recorded)."""

    split: str
    index: int
    doc_id: str
    rows: dict[str, tuple[Any, list[dict]]] | None
    error: tuple[str, str | None] | None
    ocr: tuple[int, float]
    previews: dict[str, bytes] | None = None
    spans: list[dict] | None = None


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
    groups: tuple[tuple[str, ...], ...] = ()  # config groups of the ``(..., group)`` tasks (:mod:`.pool`)
    preview: tuple[str, str] | None = None  # ``(split, doc_id)`` whose shifted pages make the card's previews
    timeline: bool = False  # record :mod:`dogood.pipeline.timeline` spans and send them back

    def configs(self, task: Task | Unit) -> tuple[str, ...] | dict[str, list]:
        """The configs a task runs: its group's, or every config."""
        return self.groups[task[3]] if len(task) > 3 else self.chains


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


def process_task(task: Task | Unit) -> TaskResult:
    """Load one document, apply its configs' chains (once per copy), make each config's rows and statistics.

    A failure comes back as ``(message, traceback)`` in ``error``, the
    traceback only for an unexpected error (a bug or a library's).
    """
    return process_document(task, None)


def process_document(task: Task | Unit, doc: Document | None) -> TaskResult:
    """:func:`process_task` of a document already read (``None``: load it by id), e.g. from a source's
    ``read_slice``; OCR counts only what runs here."""
    pages, seconds = tesseract_runs()
    start, cpu = time.time(), time.process_time()
    split, index, doc_id, rows, error, previews = _process(task, doc)
    timeline.add_span(timeline.TASK, start, time.time(), doc=doc_id, group=task[3] if len(task) > 3 else None,
                      cpu=time.process_time() - cpu)
    pages_after, seconds_after = tesseract_runs()
    return TaskResult(split, index, doc_id, rows, error, (pages_after - pages, seconds_after - seconds),
                      previews or None, timeline.drain())


def _process(task: Task | Unit, doc: Document | None = None) -> tuple:
    split, index, doc_id = task[:3]
    spec = _WORKER["spec"]
    previews: dict[str, bytes] = {}
    try:
        with timeline.span("load"):
            if doc is None:
                doc = spec.sources[split].load(doc_id)
            doc.image.check_pixels()  # decoded once: undecodable pixel data is never written
        plain = doc
        if spec.quads:
            doc = doc.with_quads()
        source_page = SourcePage(doc)  # what the factor measures read of the source, once for the task's configs
        draw_preview = spec.preview == (split, doc_id)
        results = {}
        for config in spec.configs(task):
            chain = spec.chains[config]
            rows, stats = [], []
            for copy in range(spec.copies):
                with timeline.span("shift", config=config):
                    shifted = apply_chain(doc, chain, spec.seed, copy)
                    if shifted.image is not doc.image:
                        shifted.image.check_pixels()
                if draw_preview and copy == 0:  # the page the first row shows (without quads, as a build without)
                    with timeline.span("preview", config=config):
                        previews.update(_preview(plain, shifted if plain is doc else None, chain, spec.seed, config))
                if spec.copies > 1:
                    shifted = shifted.replace(id=copy_id(doc_id, copy, spec.copies))
                with timeline.span("row", config=config):
                    row = document_to_row(shifted, spec.schema, spec.box_level, spec.labels, quads=spec.quads)
                with timeline.span("measure", config=config):
                    stats.append(measure_config(doc, shifted, row, spec, config, source_page))
                rows.append(row)
            with timeline.span("table", config=config):
                results[config] = (rows_table(rows, spec.schema, spec.labels, spec.quads), stats)
        return split, index, doc_id, results, None, previews
    except DogoodError as exc:
        return split, index, doc_id, None, (str(exc), None), None
    except Exception as exc:  # a bug or an unexpected library error: keep the traceback
        return split, index, doc_id, None, (f"{type(exc).__name__}: {exc}", traceback.format_exc()), None


def measure_config(original: Document, shifted: Document, row: dict, spec: WorkerSpec, config: str,
                   source_page: SourcePage) -> dict[str, Any]:
    """Every measure a build takes of one document in one config: the place they all run, in the workers.

    The statistics the card states (:func:`dogood.pipeline.stats.document_stats`: counts, what each shift did,
    the factor table's measured changes) and, for a severity config, the measured effects. The driver only adds
    them up (:func:`dogood.pipeline.stats.add`), so a measure added here costs the driver nothing."""
    return document_stats(original, shifted, row, spec.schema, spec.labels, measure=config in spec.measured,
                          source_page=source_page, box_level=spec.box_level)


def rows_table(rows: list[dict], schema: str, labels: tuple[str, ...] | None = None, quads: bool = False):
    """``rows`` as a ``pyarrow.Table`` of the output schema: what a worker sends back and a shard file writes (the
    Parquet bytes are those of the same rows written one by one: :class:`~dogood.pipeline.parquet_writer.ShardFile`)."""
    import pyarrow as pa

    from dogood.pipeline.parquet_writer import arrow_schema

    return pa.Table.from_pylist(rows, schema=arrow_schema(schema, tuple(labels) if labels is not None else None, quads))


def _preview(original: Document, shifted: Document | None, chain, seed: int, config: str) -> dict[str, bytes]:
    """``{config: JPEG}`` of :func:`preview_jpeg` (``shifted`` ``None``: the chain applied to ``original`` anew);
    ``{}`` when drawing fails, which never fails the page: the driver draws that preview and reports the error."""
    try:
        return {config: preview_jpeg(original, shifted or apply_chain(original, chain, seed), config)}
    except Exception:  # noqa: BLE001 - redrawn by the driver (dogood.pipeline.card.write_previews)
        return {}


def preview_jpeg(original: Document, shifted: Document, config: str) -> bytes:
    """The card's preview of ``config`` (``previews/<config>.jpg``): the page beside its shifted copy, as JPEG."""
    from dogood.measures.preview import render_preview

    image = render_preview(original, shifted, max_height=800, title_right=config)
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="JPEG", quality=85)
    return buffer.getvalue()
