"""Peak memory and time of ``dogood build ... --limit 3`` over a million-row Parquet file (issue 26).

Makes one Parquet file of ``--rows`` RVL-CDIP-style rows (``image``: a small PNG, ``label``: a ClassLabel; with
``--ids``, an ``id`` column too) under a temporary folder, then builds a one-config recipe over its first 3 rows
through three sources, each in its own process (peak resident memory from ``/usr/bin/time -v``):

- ``hf`` (``source: {kind: hf}``), with the checkout under test (``--tree``, default this one);
- ``hf`` with another checkout (``--before``, e.g. ``/work/main``), for the figure before the change;
- ``rvl_cdip`` reading the same file as Parquet shards: the peer the issue compares with.

Usage: ``python bench/bench_limit_memory.py [--rows 1000000] [--before /work/main] [--ids]``.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

RECIPE = """\
name: limit-bench
version: 1.0.0
source: {{kind: {kind}{options}}}
splits: [test]
configs:
  plain: []
"""


def make_parquet(path: Path, rows: int, ids: bool) -> None:
    import datasets
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    from PIL import Image

    from dogood.core.schema import RVL_CDIP_CLASSES

    buf = io.BytesIO()
    page = np.full((64, 48), 255, np.uint8)
    page[20:30, 5:40] = 0
    Image.fromarray(page).save(buf, format="PNG")
    png = buf.getvalue()
    head, tail = png[:33], png[33:]  # signature + IHDR, then IDAT + IEND
    filler = np.random.default_rng(0).bytes(1 << 16)

    def unique_png(i: int) -> bytes:
        """The page with a tEXt chunk of its own (the row number and 100 random bytes): no two rows' bytes are
        equal, so Parquet cannot fold the column into a dictionary."""
        text = b"row\0" + str(i).encode() + filler[(i * 7) % 60000:(i * 7) % 60000 + 100].hex().encode()
        chunk = b"tEXt" + text
        return head + len(text).to_bytes(4, "big") + chunk + zlib.crc32(chunk).to_bytes(4, "big") + tail

    fields = {"image": datasets.Image(), "label": datasets.ClassLabel(names=list(RVL_CDIP_CLASSES))}
    if ids:
        fields = {"id": datasets.Value("string"), **fields}
    schema = datasets.Features(fields).arrow_schema
    group = 10_000
    with pq.ParquetWriter(path, schema) as writer:
        for start in range(0, rows, group):
            n = min(group, rows - start)
            image = pa.StructArray.from_arrays([pa.array([unique_png(start + i) for i in range(n)], pa.binary()),
                                                pa.nulls(n, pa.string())],
                                               names=["bytes", "path"])
            columns = {"image": image, "label": pa.array(np.arange(start, start + n) % 16, pa.int64())}
            if ids:
                columns = {"id": pa.array([f"doc-{i:08d}" for i in range(start, start + n)], pa.string()), **columns}
            writer.write_table(pa.table(columns, schema=schema))


def run(tree: Path, recipe: Path, source: Path, out: Path, env: dict) -> tuple[float, float, str]:
    """(peak MiB, seconds, last stderr line) of one build in its own process."""
    cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "dogood", "build", str(recipe), "--source", str(source),
           "--limit", "3", "--out", str(out), "--quiet"]
    start = time.perf_counter()
    # run from the output's folder: `python -m` puts the working folder first on sys.path, and a checkout there
    # would be imported instead of `tree`
    proc = subprocess.run(cmd, env={**env, "PYTHONPATH": str(tree)}, capture_output=True, text=True, cwd=out.parent)
    seconds = time.perf_counter() - start
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    lines = [line for line in proc.stderr.splitlines() if line.startswith("dogood")]
    status = "ok" if proc.returncode == 0 else (lines[-1] if lines else f"exit {proc.returncode}")
    return (int(peak.group(1)) / 1024 if peak else float("nan")), seconds, status


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--tree", default=str(REPO))
    parser.add_argument("--before", help="another checkout to measure the hf source with (the figure before)")
    parser.add_argument("--ids", action="store_true", help="give the rows an 'id' column")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dogood-bench-limit-") as tmp:
        tmp = Path(tmp)
        (tmp / "data").mkdir()
        data = tmp / "data" / "test-00000-of-00001.parquet"
        t0 = time.perf_counter()
        make_parquet(data, args.rows, args.ids)
        print(f"{args.rows} rows{' with ids' if args.ids else ''}: {data.stat().st_size / 2**20:.1f} MiB, made in "
              f"{time.perf_counter() - t0:.1f} s")
        env = {**os.environ, "HF_HOME": str(tmp / "hf"), "DOGOOD_CACHE": str(tmp / "cache"),
               "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
        cases = [("hf", Path(args.tree).resolve(), "kind: hf", "")]
        if args.before:
            cases.append(("hf (before)", Path(args.before).resolve(), "kind: hf", ""))
        cases.append(("rvl_cdip parquet", Path(args.tree).resolve(), "kind: rvl_cdip", ", ocr: false"))
        print("| source | checkout | peak RSS (MiB) | seconds | result |")
        print("|---|---|---:|---:|---|")
        for k, (label, tree, kind, options) in enumerate(cases):
            recipe = tmp / f"recipe-{k}.yaml"
            recipe.write_text(RECIPE.format(kind=kind.split(": ")[1], options=options), encoding="utf-8")
            peak, seconds, status = run(tree, recipe, data, tmp / f"out-{k}", env)
            print(f"| {label} | {tree} | {peak:,.0f} | {seconds:.1f} | {status} |")


if __name__ == "__main__":
    main()
