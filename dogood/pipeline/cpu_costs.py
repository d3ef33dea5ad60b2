"""CPU milliseconds per page of each shift (and of reading and writing a page), from dogood's own benchmarks.

``dogood plan`` estimates a build's time from these figures: per config, the sum of its steps' costs plus the
row, times the pages, over the worker processes. They are measurements on one machine (2 AMD EPYC cores, shared,
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
    "funsd": (0.5, "FUNSD PNG and JSON, about the no-op row's cost"),
    "rvl_cdip": (4.4 + 332.0, "RESULTS (l): TIFF read 4.4 ms + source OCR 332 ms a page (once; cached after)"),
    "synthetic": (8.7, "RESULTS (l) read, synthetic page"),
    "hf": (1.0, "a Parquet row decoded"),
    "docvqa": (1.0, "a page and its OCR JSON"),
}

#: What a config costs beside its pages, CPU ms: its preview, statistics, card lines and shard files. From RESULTS
#: "All FUNSD recipes": funsd-fa's 49 configs took 17.7 s on 2 workers for about 1.6 CPU-s of shift and row work
#: on 50 pages, about 0.7 CPU-s more per config.
CONFIG_MS = (700.0, "RESULTS 'All FUNSD recipes', funsd-fa: 49 configs, 17.7 s on 2 workers")

#: Loading done once per worker process before the first page, CPU ms, per shift.
ONCE_MS: dict[str, tuple[float, str]] = {
    **{name: (4000.0, "importing TextAttack (about 4 s)") for name in ("homoglyph_swap", "number_swap",
                                                                       "embedding_swap")},
    "embedding_swap": (4000.0 + 41_200.0, "TextAttack, and counter-fitting GloVe once (41.2 s; cached after)"),
    "move": (5000.0, "training the CRF baseline once when it is not cached (a few seconds)"),
}

#: A shift without a figure, for grouping configs only (:func:`config_ms`): about a mid-priced image shift.
UNKNOWN_SHIFT_MS = 20.0


def config_ms(chain, copies: int = 1) -> float:
    """A config's estimated CPU ms per source page: its steps' :data:`SHIFT_MS` and the row, per copy (a shift
    without a figure counts :data:`UNKNOWN_SHIFT_MS`). The pool groups configs by it
    (:func:`dogood.pipeline.pool.config_groups`); only the ratios between configs matter there."""
    names = [getattr(step, "name", step.get("shift") if isinstance(step, dict) else None) for step in chain]
    return copies * (ROW_MS[0] + sum(SHIFT_MS.get(name, (UNKNOWN_SHIFT_MS, ""))[0] for name in names))


def read_ms(kind: str | None) -> float:
    """Estimated CPU ms to read one page of a source kind (:data:`READ_MS`; 1 ms for a kind without a figure)."""
    return READ_MS.get(kind or "", (1.0, ""))[0]
