"""Whole builds on FUNSD test, timed and laid out on a timeline: how they scale with worker processes.

    python bench/bench_build.py                                   # no-op vs merge, 1 and 2 processes (throughput)
    python bench/bench_build.py --recipe funsd-l --recipe funsd-p --num-proc 1 2 --timeline /tmp/timeline.json
    python bench/bench_build.py --recipe funsd-l --num-proc 2 --ray-nodes 2   # on a local Ray cluster of 2 nodes

Each build reads the FUNSD test forms, applies the recipe's chains and writes Parquet plus the card, exactly as
``dogood build``, into a fresh folder with a fresh cache (the one-time resources, the CRF baseline, word vectors and
OCR, are linked in; what a build computes, such as ``move``'s strengths, is not), after one untimed warm-up build of
2 documents per recipe. The process counts are interleaved within each repeat, so a machine's changing load falls on
all of them alike. Reported per build: wall seconds, CPU seconds (driver and workers), speed-up and efficiency
against 1 process in the same run (``T1 / (N * TN)``), and the load average before and after.

``--timeline FILE`` records each build's timeline (:mod:`dogood.pipeline.timeline`: the driver's steps, each
worker's start and tasks, their loads, shifts, rows, measures and previews), writes them all to ``FILE`` and prints
each one's summary: busy and serial seconds, the serial share of the run, Amdahl's serial share of the work (serial
over serial plus busy) and the speed-up it gives at 16 processes, and where the driver's and the workers' time went.
The serial share counts busy workers, not CPU, so it holds on a loaded machine.

``--ray-nodes K`` builds on a local Ray cluster of ``K`` nodes (``ray.cluster_utils.Cluster``, processes with their
own CPU counts, ``N / K`` each) instead of the process pool.

Without ``--recipe``: the no-op recipe (``funsd``, config ``original``, read and write only) against ``funsd-l``'s
``merge`` config, documents per second and the merge build's share of the no-op's, and the merge shift alone.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
#: Cache entries a build only reads once made (linked into each build's fresh cache): made once per machine.
ONE_TIME = ("models", "embeddings", "ocr", "downloads", "coco")


def cpu_seconds() -> float:
    """CPU seconds of this process and its waited-for children (the pool's workers, once the pool is closed)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@contextmanager
def fresh_cache(tmp: Path):
    """``DOGOOD_CACHE`` pointed at a new folder holding links to the current cache's one-time entries."""
    from dogood.core.paths import cache_dir

    old_value = os.environ.get("DOGOOD_CACHE")
    old = cache_dir()
    new = Path(tempfile.mkdtemp(prefix="cache-", dir=tmp))
    for entry in old.iterdir():
        if entry.name in ONE_TIME:
            (new / entry.name).symlink_to(entry)
    os.environ["DOGOOD_CACHE"] = str(new)
    try:
        yield new
    finally:
        if old_value is None:
            os.environ.pop("DOGOOD_CACHE", None)
        else:
            os.environ["DOGOOD_CACHE"] = old_value


def one_build(recipe, configs, source: str, num_proc: int, limit: int | None, tmp: Path, ray: str | None,
              record: bool) -> dict:
    from dogood.pipeline import timeline
    from dogood.pipeline.build import build

    load_before = os.getloadavg()
    with fresh_cache(tmp), timeline.recording() as spans:
        out = Path(tempfile.mkdtemp(prefix="out-", dir=tmp)) / "out"
        c0, w0 = cpu_seconds(), time.perf_counter()
        with timeline.span("build"):
            report = build(recipe, out, source_path=source, num_proc=num_proc, progress=False, limit=limit,
                           configs=configs, ray=ray)
        wall, cpu = time.perf_counter() - w0, cpu_seconds() - c0
    run = {"recipe": recipe.name, "configs": configs, "num_proc": num_proc, "docs": sum(report.documents.values()),
           "wall": wall, "cpu": cpu, "load_before": load_before, "load_after": os.getloadavg()}
    if record:
        run["summary"] = timeline.summary(spans, num_proc)
        run["spans"] = spans
    return run


@contextmanager
def one_thread_per_library():
    """This process's OpenCV, BLAS/OpenMP, numba and torch at one thread each, as every pool worker runs
    (dogood.pipeline.pool), restored after: a one-process build that leaves the other cores idle."""
    import cv2
    from threadpoolctl import threadpool_limits

    numba, torch = sys.modules.get("numba"), sys.modules.get("torch")
    before = (cv2.getNumThreads(), numba.get_num_threads() if numba else None,
              torch.get_num_threads() if torch else None)
    cv2.setNumThreads(1)
    if numba:
        numba.set_num_threads(1)
    if torch:
        torch.set_num_threads(1)
    try:
        with threadpool_limits(1):
            yield
    finally:
        cv2.setNumThreads(before[0])
        if numba:
            numba.set_num_threads(before[1])
        if torch:
            torch.set_num_threads(before[2])


def print_summary(run: dict) -> None:
    s = run["summary"]
    print(f"  timeline {run['recipe']} N={run['num_proc']}: wall {s['wall']:.1f} s, busy {s['busy']:.1f} s in "
          f"{s['tasks']} tasks (mean {s['mean_busy_workers']:.2f} workers busy), serial {s['serial']:.2f} s = "
          f"{100 * s['serial_share']:.1f}% of this run; Amdahl's serial share {100 * s['amdahl_serial']:.2f}% -> "
          f"{s['speedup'][16]:.1f}x at 16 processes; start-up {s['startup']:.2f} s; workers busy "
          f"{100 * s['occupancy']:.1f}% from the first task to the last")
    steps = ", ".join(f"{k} {v:.2f}" for k, v in list(s["steps"].items())[:16])
    print(f"    seconds per step: {steps}; the tasks' CPU {s['cpu']:.1f} s")
    serial = ", ".join(f"{k} {v:.2f}" for k, v in s["serial_steps"].items())
    print(f"    serial seconds: {serial}")


def config_costs(spans: list[dict]) -> dict[str, dict[str, float]]:
    """Per config, CPU ms per row of each worker step (``shift``, ``row``, ``measure``, ``table``), from a timeline;
    and ``load``, ms per page read (per task)."""
    steps: dict[str, dict[str, list[float]]] = {}
    for s in spans:
        if s["who"] != "driver" and "config" in s and s["what"] in ("shift", "row", "measure", "table"):
            steps.setdefault(s["config"], {}).setdefault(s["what"], []).append(s.get("cpu", 0.0))
    out = {c: {k: 1000 * sum(v) / len(v) for k, v in by.items()} for c, by in steps.items()}
    loads = [s.get("cpu", 0.0) for s in spans if s["what"] == "load"]
    if loads:
        out["(read)"] = {"load": 1000 * sum(loads) / len(loads)}
    return out


def print_config_costs(run: dict) -> None:
    costs = config_costs(run["spans"])
    print(f"    CPU ms per row ({run['recipe']}, N={run['num_proc']}): config shift row measure table total")
    for config, c in costs.items():
        if config == "(read)":
            print(f"      reading a page: {c['load']:.1f}")
            continue
        total = sum(c.get(k, 0.0) for k in ("shift", "row", "measure", "table"))
        print(f"      {config:<22} {c.get('shift', 0):7.1f} {c.get('row', 0):6.1f} {c.get('measure', 0):7.1f} "
              f"{c.get('table', 0):5.1f} {total:7.1f}")


def start_cluster(nodes: int, cpus: int):
    """A local Ray cluster of ``nodes`` nodes, ``cpus`` CPUs each (as tests/pipeline/test_ray_cluster.py)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": cpus, "object_store_memory": 100 * 1024**2})
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=cpus, object_store_memory=100 * 1024**2)
    ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
    return cluster


def scaling(args) -> dict:
    from dogood.pipeline.recipe import load_recipe

    results = {"machine": f"{platform.machine()} {platform.processor() or ''}".strip(), "cores": os.cpu_count(),
               "python": sys.version.split()[0], "runs": []}
    recipes = []
    for item in args.recipe:
        name, _, configs = item.partition(":")
        recipe = load_recipe(name)
        chosen = configs.split(",") if configs else list(recipe.configs)
        chosen = [c for c in chosen if c not in (args.exclude_config or [])]
        recipes.append((recipe, chosen if chosen != list(recipe.configs) else None))
    with tempfile.TemporaryDirectory(prefix="bench-build-") as tmp:
        tmp = Path(tmp)
        for recipe, configs in recipes:  # untimed warm-up: imports, compiled code, one-time resources
            one_build(recipe, configs, args.source, 1, 2, tmp, None, False)
        for r in range(args.repeat):
            for recipe, configs in recipes:
                for num_proc in args.num_proc:
                    ray = None
                    cluster = None
                    if args.ray_nodes:
                        cluster = start_cluster(args.ray_nodes, max(1, num_proc // args.ray_nodes))
                        ray = "auto"
                    try:
                        run = one_build(recipe, configs, args.source, num_proc, args.limit, tmp, ray,
                                        args.timeline is not None)
                        if num_proc == 1 and args.one_thread_baseline:
                            with one_thread_per_library():
                                single = one_build(recipe, configs, args.source, 1, args.limit, tmp, None,
                                                   args.timeline is not None)
                            single["one_thread"] = True
                            results["runs"].append({**single, "repeat": r})
                            print(f"{recipe.name:<9} N=1 (one thread per library)  wall {single['wall']:7.2f} s  "
                                  f"CPU {single['cpu']:7.2f} s  load {single['load_before'][0]:.2f} -> "
                                  f"{single['load_after'][0]:.2f}", flush=True)
                    finally:
                        if cluster is not None:
                            import ray as ray_module

                            ray_module.shutdown()
                            cluster.shutdown()
                    run["repeat"] = r
                    results["runs"].append(run)
                    print(f"{recipe.name:<9} N={num_proc:<3} docs {run['docs']:>3}  wall {run['wall']:7.2f} s  "
                          f"CPU {run['cpu']:7.2f} s  load {run['load_before'][0]:.2f} -> {run['load_after'][0]:.2f}",
                          flush=True)
                    if "summary" in run:
                        print_summary(run)
                        if args.config_costs:
                            print_config_costs(run)
    print()
    print(f"{'recipe':<9} {'N':>3} {'wall s (median)':>16} {'CPU s':>8} {'speed-up':>9} {'efficiency':>10} "
          f"{'serial %':>8} {'Amdahl 16x':>10}")
    for recipe, _ in recipes:
        base = None
        for num_proc in args.num_proc:
            runs = [x for x in results["runs"]
                    if x["recipe"] == recipe.name and x["num_proc"] == num_proc and not x.get("one_thread")]
            wall = statistics.median(x["wall"] for x in runs)
            cpu = statistics.median(x["cpu"] for x in runs)
            base = base if base is not None else (wall if num_proc == 1 else None)
            speed = f"{base / wall:.2f}" if base else "-"
            eff = f"{base / (num_proc * wall):.2f}" if base else "-"
            serial = amdahl = "-"
            if "summary" in runs[0]:
                serial = f"{100 * statistics.median(x['summary']['serial_share'] for x in runs):.1f}"
                amdahl = f"{statistics.median(x['summary']['speedup'][16] for x in runs):.1f}"
            print(f"{recipe.name:<9} {num_proc:>3} {wall:>16.2f} {cpu:>8.1f} {speed:>9} {eff:>10} {serial:>8} "
                  f"{amdahl:>10}")
            results.setdefault("table", []).append({"recipe": recipe.name, "num_proc": num_proc, "wall": wall,
                                                    "cpu": cpu, "speedup": base / wall if base else None,
                                                    "efficiency": base / (num_proc * wall) if base else None})
        single = [x["wall"] for x in results["runs"] if x["recipe"] == recipe.name and x.get("one_thread")]
        if single:
            one = statistics.median(single)
            effs = ", ".join(f"N={row['num_proc']} {one / (row['num_proc'] * row['wall']):.2f}"
                             for row in results["table"] if row["recipe"] == recipe.name and row["num_proc"] > 1)
            print(f"{recipe.name:<9} N=1 with one thread per library: {one:.2f} s ({one / base:.2f}x the default's "
                  f"wall) -> efficiency against it: {effs}")
            results.setdefault("one_thread", {})[recipe.name] = one
    return results


# -- the default: no-op against merge ---------------------------------------------------------------------------
def time_build(recipe_name: str, source: str, num_proc: int, repeat: int, splits: list[str]) -> tuple[list[float], int]:
    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import load_recipe

    recipe = load_recipe(recipe_name)
    recipe.splits = splits
    times = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            report = build(recipe, Path(tmp) / "out", source_path=source, num_proc=num_proc, progress=False)
            times.append(time.perf_counter() - start)
    return times, sum(report.documents.values())


def throughput(args) -> dict:
    import numpy as np

    from dogood.shifts import MergeBoxes
    from dogood.sources.funsd import FunsdSource

    results = {"machine": f"{platform.machine()} {platform.processor() or ''}".strip(), "python": sys.version.split()[0], "runs": []}
    print(f"{'recipe':<10} {'config':<9} {'procs':>5} {'docs':>5} {'median s':>9} {'docs/s':>8} {'vs no-op':>9}")
    for num_proc in args.num_proc:
        baseline = None
        for recipe, config in (("funsd", "original"), ("funsd-l", "merge")):
            times, docs = time_build(recipe, args.source, num_proc, args.repeat, args.splits)
            med = statistics.median(times)
            rate = docs / med
            baseline = baseline or rate
            print(f"{recipe:<10} {config:<9} {num_proc:>5} {docs:>5} {med:>9.3f} {rate:>8.1f} {rate / baseline:>8.0%}")
            results["runs"].append({"recipe": recipe, "config": config, "num_proc": num_proc, "docs": docs,
                                    "seconds": times, "docs_per_s": rate, "vs_noop": rate / baseline})

    source = FunsdSource(root=args.source, split="test")
    docs = [source.load(i) for i in source.ids()]
    shift = MergeBoxes(10, 5)
    start = time.perf_counter()
    for _ in range(args.repeat):
        for doc in docs:
            shift(doc, 0)
    per_doc = (time.perf_counter() - start) / (args.repeat * len(docs))
    words = np.mean([len(d.words) for d in docs])
    print(f"merge shift alone: {per_doc * 1000:.2f} ms/doc ({1 / per_doc:.0f} docs/s, {words:.0f} words/doc)")
    results["merge_shift_ms_per_doc"] = per_doc * 1000
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=str(SHARED / "funsd" / "dataset"))
    parser.add_argument("--repeat", type=int, default=None, help="builds per recipe and process count (default: 3 "
                                                                  "without --recipe, else 1)")
    parser.add_argument("--num-proc", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--splits", nargs="+", default=["test"], help="FUNSD splits to build, without --recipe "
                                                                      "(test: 50 forms, train: 149)")
    parser.add_argument("--recipe", action="append", metavar="NAME[:CONFIG,...]",
                        help="time this recipe (its configs, or those named) at each --num-proc (repeatable)")
    parser.add_argument("--limit", type=int, help="with --recipe: the first N documents only")
    parser.add_argument("--exclude-config", action="append", metavar="NAME",
                        help="with --recipe: leave this config out (e.g. bert_attack, which needs a masked LM)")
    parser.add_argument("--timeline", metavar="FILE", help="with --recipe: record each build's timeline into FILE "
                                                           "and print its summary")
    parser.add_argument("--config-costs", action="store_true", help="with --timeline: each config's CPU ms per row "
                                                                       "(shift, row, measures), from the timeline")
    parser.add_argument("--ray-nodes", type=int, default=0, help="with --recipe: build on a local Ray cluster of "
                                                                  "this many nodes")
    parser.add_argument("--one-thread-baseline", action="store_true",
                        help="with --recipe: also time N=1 with one thread per library, as each pool worker runs "
                             "(the default N=1 lets OpenCV and BLAS use idle cores), and give the efficiency "
                             "against it")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    os.environ.setdefault("DOGOOD_DATA_DIR", str(SHARED))
    os.environ.setdefault("NLTK_DATA", str(SHARED / "nltk_data"))
    if args.recipe:
        args.repeat = args.repeat or 1
        results = scaling(args)
        if args.timeline:
            Path(args.timeline).write_text(json.dumps(results["runs"], indent=1))
            for run in results["runs"]:
                run.pop("spans", None)
    else:
        args.repeat = args.repeat or 3
        results = throughput(args)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
