"""CPU milliseconds per page of each shift (and of reading, writing and measuring a page), from dogood's benchmarks.

``dogood plan`` estimates a build's time from these figures: per config, the sum of its steps' costs plus the
row and the measures (:func:`config_figures`), times the pages, over the worker processes and how busy they keep
(:data:`OCCUPANCY`), plus what a build does alone per config (:data:`CONFIG_FIXED_MS`). They are measurements on one machine (2 AMD EPYC cores, shared,
``bench/RESULTS.md``); another machine scales them, the ratios between shifts stay. Each figure names where it
comes from. A shift without a figure (``bert_attack``: no BERT weights offline when the benchmarks ran) gets no
estimate, and the plan says so.
"""

from __future__ import annotations

#: Shift -> (CPU ms per FUNSD-sized page, where the figure comes from). "(a)" figures are 1000 / pages per second
#: of the config, shift and row together, on pre-loaded FUNSD test pages (bench/bench_peers.py); the row alone
#: is :data:`ROW_MS`, which the estimate adds once per config, so these are the shift's share.
SHIFT_MS: dict[str, tuple[float, str]] = {
    "char_deletion": (0.45, "RESULTS (a) funsd-t char_deletion 1,102 pages/s"),
    "homoglyph_swap": (0.5, "RESULTS (a) funsd-t homoglyph_swap 1,044 pages/s"),
    "number_swap": (1.3, "RESULTS (a) funsd-t number_swap 556 pages/s"),
    "embedding_swap": (2.6, "RESULTS (a) funsd-t embedding_swap 326 pages/s"),
    "char_perturbation": (0.9, "RESULTS (a) funsd-t ms_char_* 564-758 pages/s"),
    "word_perturbation": (1.2, "RESULTS (a) funsd-t ms_word_* 485-869 pages/s"),
    "bg_typo": (0.35, "RESULTS (a) funsd-t bg_typo 1,254 pages/s"),
    "bg_synonym": (0.35, "RESULTS (a) funsd-t bg_synonym 1,243 pages/s"),
    "bg_adversarial": (0.8, "RESULTS (a) funsd-t bg_adversarial 810 pages/s"),
    "value_text_augment": (7.5, "RESULTS (a) funsd-t value_text_augment 126 pages/s"),
    "key_drop": (0.25, "RESULTS (a) funsd-t key_drop 1,444 pages/s"),
    "center_shift": (1.0, "RESULTS (a) funsd-fa center_shift 675 pages/s"),
    "box_stretch": (0.85, "RESULTS (a) funsd-fa box_stretch 762 pages/s"),
    "margin_padding": (18.0, "RESULTS (a) funsd-fa margin_padding 54 pages/s"),
    "global_shuffle": (0.5, "RESULTS (a) funsd-fa global_shuffle 1,075 pages/s"),
    "neighbor_shuffle": (0.85, "RESULTS (a) funsd-fa neighbor_shuffle 769 pages/s"),
    "non_neighbor_shuffle": (0.9, "RESULTS (a) funsd-fa non_neighbor_shuffle 740 pages/s"),
    "bg_drop": (0.55, "RESULTS (a) funsd-fa bg_drop 992 pages/s"),
    "neighbor_bg_drop": (0.9, "RESULTS (a) funsd-fa neighbor_bg_drop 725 pages/s"),
    "value_location_augment": (14.0, "RESULTS (a) funsd-fa value_location_augment 69 pages/s"),
    "merge": (1.6, "RESULTS (a) funsd-l merge 490 pages/s"),
    "move": (94.5, "RESULTS (a) funsd-l move 10.5 pages/s (strengths scored, cache empty)"),
    "natural_background": (21.5, "RESULTS (a) funsd-i natural 45.7 pages/s"),
    "distort": (22.4, "RESULTS (a) funsd-i distort 43.8 pages/s"),
    "capture": (26.0, "RESULTS (j) capture 26 ms CPU a page"),
    "scan_quality": (36.8, "RESULTS (k) scan_quality (one kind a page) 27.2 pages per CPU-second"),
    "reocr": (389.0, "RESULTS (a) funsd-i distort_reocr 2.43 pages/s, less distort (Tesseract binary)"),
    "rotate": (14.7, "RESULTS (m) rotate 68.1 pages per CPU-s, the shift alone"),
    "watermark": (10.5, "RESULTS (m) watermark 94.8 pages per CPU-s, the shift alone"),
    "illumination": (6.4, "RESULTS (m) illumination 155.7 pages per CPU-s, the shift alone"),
    "shadow": (6.1, "RESULTS (m) shadow 162.8 pages per CPU-s, the shift alone"),
    "defocus": (2.7, "RESULTS (m) defocus 363.9 pages per CPU-s, the shift alone"),
    "motion_blur": (7.5, "RESULTS (m) motion_blur 134.2 pages per CPU-s, the shift alone"),
    "speckle": (29.2, "RESULTS (m) speckle 34.3 pages per CPU-s, the shift alone"),
    "paper_texture": (60.6, "RESULTS (m) paper_texture 16.5 pages per CPU-s, the shift alone"),
}

#: Writing one output row (encode, check the image decodes, Parquet), CPU ms: the no-op config of RESULTS (a),
#: FUNSD test, 2,176 pages/s.
ROW_MS = (0.46, "RESULTS (a) funsd no-op 2,176 pages/s")

#: Reading one source page, CPU ms, per source kind.
READ_MS: dict[str, tuple[float, str]] = {
    "funsd": (5.5, "RESULTS (ad) the load step of funsd-p's timeline: PNG decoded and checked, JSON parsed"),
    "rvl_cdip": (4.4 + 332.0, "RESULTS (l): TIFF read 4.4 ms + source OCR 332 ms a page (once; cached after)"),
    "synthetic": (8.7, "RESULTS (l) read, synthetic page"),
    "hf": (1.0, "a Parquet row decoded"),
    "docvqa": (1.0, "a page and its OCR JSON"),
}

#: Drawing a config's preview (the first page beside its shifted copy, JPEG), CPU ms, in a worker: the ``preview``
#: steps of funsd-p's timeline.
PREVIEW_MS = (30.0, "RESULTS (ad) preview steps of funsd-p's timeline, 65 configs, median 28 ms")

#: Loading done once per worker process before the first page, CPU ms, per shift.
ONCE_MS: dict[str, tuple[float, str]] = {
    **{name: (4000.0, "importing TextAttack (about 4 s)") for name in ("homoglyph_swap", "number_swap",
                                                                       "embedding_swap")},
    "embedding_swap": (4000.0 + 41_200.0, "TextAttack, and counter-fitting GloVe once (41.2 s; cached after)"),
    "move": (5000.0, "training the CRF baseline once when it is not cached (a few seconds)"),
}

#: Encoding a page whose pixels a shift changed (PNG), CPU ms beyond :data:`ROW_MS`: the ``row`` steps of the image
#: configs of funsd-p and funsd-i on a build's timeline (median; paper textures and scan noise cost up to 100 ms).
ENCODE_MS = (11.7, "RESULTS (ad) rows of funsd-p's pixel configs, all 50 forms, median")

#: What a build measures of a row (:func:`dogood.pipeline.worker.measure_config`: the card's statistics and the
#: factor table's measured changes), CPU ms per page, by what the config changes: words only, boxes or word order,
#: pixels, pixels moved (a shift that declares ``geometry``). From the ``measure`` steps of build timelines.
MEASURE_MS: dict[str, tuple[float, str]] = {
    "text": (1.8, "RESULTS (ad) measures of funsd-t configs, median"),
    "layout": (3.0, "RESULTS (ad) measures of funsd-l merge configs"),
    "image": (8.0, "RESULTS (ad) measures of funsd-i natural and scan_* configs"),
    "geometric": (18.0, "RESULTS (ad) measures of funsd-i distort, curl, fold, capture"),
}

#: A severity config (``severities:``) also measures its effects (SSIM, MS-SSIM, ink contrast): CPU ms per page.
EFFECTS_MS = (30.0, "RESULTS (ad) measures of funsd-p's levels, median 37.6 ms (geometric 67.8), less funsd-i's")

#: A shift without a figure, for grouping configs only (:func:`config_ms`): about a mid-priced image shift.
UNKNOWN_SHIFT_MS = 20.0

_PIXELS = frozenset({"ink", "background", "geometry", "quality"})


def config_kind(chain) -> str:
    """What a config changes, for its measures' cost: ``geometric``, ``image``, ``layout`` or ``text``."""
    from dogood.shifts import SHIFTS

    factors: set[str] = set()
    for step in chain:
        name = _name(step)
        factors |= set(getattr(step, "factors", None) or getattr(SHIFTS.get(name), "factors", ()) or ())
    if "geometry" in factors and factors & {"ink", "background"}:
        return "geometric"
    if factors & _PIXELS:
        return "image"
    if factors - {"text", "word_set"}:
        return "layout"
    return "text"


def _name(step) -> str | None:
    return getattr(step, "name", None) or (step.get("shift") if isinstance(step, dict) else None)


def config_figures(chain, severity: bool = False) -> list[tuple[str, float | None, str]]:
    """Each part of a config's CPU ms per page and copy, as ``(what, ms, where the figure comes from)``: its steps
    (:data:`SHIFT_MS`; ``None`` for a step without a figure), the row (:data:`ROW_MS`, and :data:`ENCODE_MS` when
    pixels change), the measures (:data:`MEASURE_MS` by :func:`config_kind`, and :data:`EFFECTS_MS` for a severity
    config)."""
    parts: list[tuple[str, float | None, str]] = []
    for step in chain:
        name = _name(step)
        figure = SHIFT_MS.get(name)
        parts.append((f"shift {name}", None, "no figure") if figure is None else (f"shift {name}", *figure))
    kind = config_kind(chain)
    parts.append(("row", *ROW_MS))
    if kind in ("image", "geometric"):
        parts.append(("new pixels encoded", *ENCODE_MS))
    parts.append((f"measures ({kind})", *MEASURE_MS[kind]))
    if severity:
        parts.append(("severity effects", *EFFECTS_MS))
    return parts


def config_ms(chain, copies: int = 1, severity: bool = False, unknown: float | None = UNKNOWN_SHIFT_MS
              ) -> float | None:
    """A config's estimated CPU ms per source page (:func:`config_figures` summed, per copy); a step without a figure
    counts ``unknown`` (``None``: the config has no estimate). The pool groups configs by it
    (:func:`dogood.pipeline.pool.config_groups`), ``dogood plan`` estimates with it."""
    total = 0.0
    for _what, ms, _where in config_figures(chain, severity):
        if ms is None:
            if unknown is None:
                return None
            ms = unknown
        total += ms
    return copies * total


def read_ms(kind: str | None) -> float:
    """Estimated CPU ms to read one page of a source kind (:data:`READ_MS`; 1 ms for a kind without a figure)."""
    return READ_MS.get(kind or "", (1.0, ""))[0]


#: How busy the workers of a build are, on average, while it runs: the mean number of workers busy over the
#: processes (:mod:`dogood.pipeline.timeline`), measured where the serial part of a build is negligible (its
#: planning, card and last writes against its pages). The per-page work of a build on ``n`` processes takes its
#: CPU time over ``n x`` this. One figure for a local pool, one for Ray.
OCCUPANCY: dict[str, tuple[float, str]] = {
    "processes": (0.97, "RESULTS (ad) funsd-l, all 50 forms, 2 processes: busy 97.2% (funsd-p 99.3%)"),
    "ray": (0.94, "RESULTS (ad) funsd-p, 10 forms, a local Ray cluster of 2 nodes x 1 CPU: busy 93.7%"),
}

#: What a build does alone besides its pages, CPU ms per config: the card, the statistics summed, the last shard
#: closed, the folder synced and renamed (the timeline's serial steps after the pages).
CONFIG_FIXED_MS = (25.0, "RESULTS (ad) card, sums, last shard's files, commit: funsd-p (65 configs), funsd-l (8)")

#: Starting the actors of a Ray build (a Python process each, dogood imported, the shifts prepared), wall ms: the
#: first task's start on a local cluster.
RAY_START_MS = (4500.0, "RESULTS (ad) first task 4.4-4.6 s into funsd-l and funsd-p builds, local 2-node cluster")


def config_fixed_seconds(workers: int = 1) -> float:
    """What a config adds to a build besides its pages, wall seconds: its preview (drawn by a worker) and its share
    of what the driver does alone (:data:`CONFIG_FIXED_MS`)."""
    return (CONFIG_FIXED_MS[0] + PREVIEW_MS[0] / max(1, workers)) / 1000


def wall_seconds(cpu_ms_per_page: float, pages: int, workers: int, ray: bool = False) -> float:
    """Wall seconds of ``pages`` pages of ``cpu_ms_per_page`` on ``workers`` processes (or Ray CPUs): the CPU time
    over the workers and their :data:`OCCUPANCY`."""
    occupancy = OCCUPANCY["ray" if ray else "processes"][0] if workers > 1 else 1.0
    return pages * cpu_ms_per_page / 1000 / (workers * occupancy)


def start_seconds(ray: bool = False) -> float:
    """Wall seconds before a build's first page: a Ray build starts its actors (:data:`RAY_START_MS`); a local
    pool's start is part of :data:`CONFIG_FIXED_MS`."""
    return RAY_START_MS[0] / 1000 if ray else 0.0
