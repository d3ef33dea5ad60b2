"""One line on stderr for each slow one-time step (a cache built, a file downloaded, a model trained, pages OCR'd).

``with one_time_step("building counter-fitted word vectors from GloVe", cached_in=folder):`` prints
``dogood: building counter-fitted word vectors from GloVe (once; cached in FOLDER) ...`` when the step
starts and `` done in 41.2 s`` (or `` failed after 3.0 s``) on the same line when it ends. Inside
:func:`silenced` (a build with ``progress=False``, the CLI's ``--quiet``) nothing is printed. Written by hand:
tqdm draws bars for loops, not a start/end line for a step of unknown length.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_SILENCED = [0]  # depth of nested :func:`silenced` blocks


@contextmanager
def silenced(on: bool = True) -> Iterator[None]:
    """No progress line inside the block when ``on``."""
    _SILENCED[0] += bool(on)
    try:
        yield
    finally:
        _SILENCED[0] -= bool(on)


def is_silenced() -> bool:
    return _SILENCED[0] > 0


def say(message: str) -> None:
    """Print ``dogood: message`` on stderr, unless silenced."""
    if not is_silenced():
        print(f"dogood: {message}", file=sys.stderr, flush=True)


@contextmanager
def one_time_step(what: str, *, cached_in: str | Path | None = None) -> Iterator[None]:
    """Announce a slow step done once (its result cached in ``cached_in``) and say how long it took."""
    if is_silenced():
        yield
        return
    where = f" (once; cached in {cached_in})" if cached_in is not None else ""
    print(f"dogood: {what}{where} ...", end="", file=sys.stderr, flush=True)
    start = time.perf_counter()
    try:
        yield
    except BaseException:
        print(f" failed after {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
        raise
    print(f" done in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
