"""Driver memory of a build from 10k to 1M documents: what the build process holds per document id.

    python bench/bench_driver_memory.py [--pages 10000 100000 1000000] [--full 10000 100000] [--json out.json]

Each run is a fresh Python process that builds, with :func:`dogood.build.build`, a recipe on the ``synthetic``
source of tiny pages, ``{kind: synthetic, pages: N, size: [64, 64], words: [0, 0], seed: 0}`` (ids are a lazy
``PageIds``), one config ``noop`` (an empty chain), one worker, into a temporary folder deleted afterwards.
Two modes:

* ``driver`` (every ``--pages`` count): the whole build as ``dogood build`` runs it (plan, ``--limit``-free ids,
  resume key with its streamed ids hash, work folder, shard listing, task feeding, the progress bar, the
  Parquet shard writing of every row, the shard records, aggregation, card and previews, commit), but the
  worker is replaced by one that hands back the first page's real result (rows and statistics) with each
  task's id: no page is rendered, so 1M documents take minutes, not the hour a real build of 1M pages would.
  This is what the driver holds; a worker's memory does not depend on the number of documents.
* ``full`` (the ``--full`` counts): the same build with the real worker (each tiny page rendered, encoded and
  written), to show that the stub changes nothing the driver holds.

Reported per run: ``peak_mb`` (``VmHWM`` of ``/proc/self/status``), ``base_mb`` (``VmRSS`` after the imports,
before the build) and ``growth`` = peak - base, seconds. The acceptance check: the driver's peak grows by less
than 100 MB from the fewest to the most documents.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LIMIT_MB = 100


def status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def child(pages: int, mode: str, out: str) -> None:
    """In the fresh process: build, print the figures as one JSON line."""
    from dogood.pipeline import build as pipeline_build
    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import parse_recipe

    recipe = parse_recipe({
        "name": "synthetic-noop", "version": "1.0.0",
        "source": {"kind": "synthetic", "pages": pages, "size": [64, 64], "words": [0, 0], "seed": 0},
        "splits": ["test"], "seed": 0, "configs": {"noop": []},
    })
    if mode == "driver":
        real = pipeline_build.run_tasks

        def stub_tasks(tasks, spec, *, num_proc, ray):
            """The first task's real result, handed back for every task with its id (tasks taken one by one)."""
            template = None
            for task in tasks:
                if template is None:
                    template = next(real([task], spec, num_proc=1, ray=None))
                split, index, doc_id = task
                rows = {c: [({**row, "id": doc_id}, stats) for row, stats in copies]
                        for c, copies in template[3].items()}
                yield split, index, doc_id, rows, None, (0, 0.0)

        pipeline_build.run_tasks = stub_tasks
    base_kb = status_kb("VmRSS")
    start = time.perf_counter()
    report = build(recipe, Path(out) / "out", progress=True)  # the tqdm bar as a user sees it (to stderr)
    seconds = time.perf_counter() - start
    peak_kb = status_kb("VmHWM")
    print(json.dumps({"documents": report.documents["test"], "seconds": seconds, "base_mb": base_kb / 1024,
                      "peak_mb": peak_kb / 1024, "growth_mb": (peak_kb - base_kb) / 1024}))


def measure(pages: int, mode: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="dogood-bench-driver-") as tmp:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(pages), mode, tmp]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{mode} build of {pages} pages failed:\n{proc.stderr[-3000:]}")
        result = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"pages": pages, "mode": mode, **result}


def markdown(runs: list[dict]) -> str:
    lines = ["| mode | documents | s | base MB | peak MB (VmHWM) | peak - base MB |", "|---|---:|---:|---:|---:|---:|"]
    for r in runs:
        lines.append(f"| {r['mode']} | {r['pages']:,} | {r['seconds']:.0f} | {r['base_mb']:.0f} | {r['peak_mb']:.0f} | "
                     f"{r['growth_mb']:.0f} |")
    for mode in dict.fromkeys(r["mode"] for r in runs):
        group = sorted((r for r in runs if r["mode"] == mode), key=lambda r: r["pages"])
        if len(group) > 1:
            d = group[-1]["peak_mb"] - group[0]["peak_mb"]
            lines.append(f"\n{mode}: peak {group[0]['pages']:,} → {group[-1]['pages']:,} documents: {d:+.1f} MB "
                         f"({'PASS' if d < LIMIT_MB else 'FAIL'}, limit < {LIMIT_MB} MB)")
    return "\n".join(lines)


def main(argv=None) -> int:
    if argv is None and sys.argv[1:2] == ["--child"]:
        child(int(sys.argv[2]), sys.argv[3], sys.argv[4])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--full", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    print(f"load average: {os.getloadavg()}", flush=True)
    runs = []
    for mode, counts in (("driver", args.pages), ("full", args.full)):
        for n in counts:
            runs.append(measure(n, mode))
            r = runs[-1]
            print(f"{mode:<6} {n:>9,} docs: {r['seconds']:7.1f} s  peak {r['peak_mb']:6.1f} MB  "
                  f"base {r['base_mb']:6.1f} MB", flush=True)
    print(f"load average: {os.getloadavg()}")
    print(markdown(runs))
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2) + "\n")
    ok = all(r for r in runs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
