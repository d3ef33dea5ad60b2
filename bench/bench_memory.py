"""Peak memory of whole builds on synthetic RVL-CDIP-sized pages: 1,000 vs 10,000 pages, no-op and merge, 1 and 2 workers.

    python bench/bench_memory.py [--pages 1000 10000] [--configs noop merge] [--num-proc 1 2] [--json out.json]

Each run is a fresh Python process that builds a recipe made in code
(``parse_recipe``) on the ``synthetic`` source, ``{kind: synthetic, pages: N,
size: [754, 1000], seed: 0}``, with one config: ``noop`` (an empty chain: read
and write only) or ``merge`` (Do-GOOD's box merge, λ1=10, λ2=5), exactly as
``dogood build`` does, into a temporary folder that is deleted afterwards.
Reported per run:

* ``driver_mb``: the build process's own peak RSS (``VmHWM`` in ``/proc/self/status``;
  ``getrusage(RUSAGE_SELF).ru_maxrss`` is kept as ``driver_ru_maxrss_mb`` but Linux
  carries it over ``execve``: a build started from a large process reports that
  process's peak, see :func:`vm_hwm_kb`);
* ``worker_mb``: the largest peak RSS of any worker process it started
  (``getrusage(RUSAGE_CHILDREN).ru_maxrss``: the maximum over the children, not a sum);
* ``tree_rss_mb``: the peak, over samples taken every 50 ms from outside by
  psutil, of the RSS summed over the build process and all its descendants (an
  upper bound: forked workers share pages with the driver that both count);
* ``tree_pss_mb``: the same with PSS (proportional set size: shared pages split
  between the processes that map them), sampled every 2 s only (reading
  ``/proc/PID/smaps_rollup`` stalls the process: every 250 ms slowed builds by
  about 40%): the memory the build really takes, give or take its short peaks;
* ``seconds`` and ``pages_per_s`` (the whole build: start-up, pages, card and previews).

The acceptance check: for each (config, workers), peak memory may grow by less
than 200 MB from the smallest to the largest page count (checked on every
measure above).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

LIMIT_MB = 200
CHAINS = {"noop": [], "merge": [{"shift": "merge", "lambda_x": 10, "lambda_y": 5}]}
MEASURES = ("driver_mb", "worker_mb", "tree_rss_mb", "tree_pss_mb")


def child(pages: int, config: str, num_proc: int, out: str) -> None:
    """Run in the fresh process: build, then print the rusage peaks as one JSON line."""
    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import parse_recipe

    recipe = parse_recipe({
        "name": f"synthetic-{config}", "version": "1.0.0",
        "source": {"kind": "synthetic", "pages": pages, "size": [754, 1000], "seed": 0},
        "splits": ["test"], "seed": 0, "configs": {config: CHAINS[config]},
    })
    start = time.perf_counter()
    report = build(recipe, Path(out) / "out", num_proc=num_proc, progress=False)
    seconds = time.perf_counter() - start
    self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kilobytes on Linux
    children_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({"documents": report.documents.get("test", 0), "seconds": seconds,
                      "driver_mb": (vm_hwm_kb() or self_kb) / 1024, "driver_ru_maxrss_mb": self_kb / 1024,
                      "worker_mb": children_kb / 1024 if num_proc > 1 else None}))


def vm_hwm_kb() -> int | None:
    """This process's peak RSS since it started its program (``VmHWM`` of ``/proc/self/status``), in kB.

    ``getrusage(RUSAGE_SELF).ru_maxrss`` is not used for the driver: Linux carries
    it over ``execve``, so a process started by a large parent (``bench_peers.py``
    holds GloVe, TextAttack and torch: 1.4 GB) reports the parent's peak. VmHWM
    belongs to the new program's memory only.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


class TreeSampler(threading.Thread):
    """Samples the summed RSS (every ``interval`` s) and PSS (every ``pss_every``-th sample) of a process tree."""

    def __init__(self, pid: int, interval: float = 0.05, pss_every: int = 40):
        super().__init__(daemon=True)
        import psutil

        self.psutil, self.root = psutil, psutil.Process(pid)
        self.interval, self.pss_every = interval, pss_every
        self.peak_rss = self.peak_pss = 0
        self.most_processes = 0
        self.stop = threading.Event()

    def run(self) -> None:
        n = 0
        while not self.stop.is_set():
            try:
                procs = [self.root] + self.root.children(recursive=True)
            except self.psutil.Error:
                break
            rss = pss = 0
            for p in procs:
                try:
                    if n % self.pss_every == 0:
                        info = p.memory_full_info()
                        rss, pss = rss + info.rss, pss + info.pss
                    else:
                        rss += p.memory_info().rss
                except self.psutil.Error:
                    pass
            self.peak_rss = max(self.peak_rss, rss)
            if n % self.pss_every == 0:
                self.peak_pss = max(self.peak_pss, pss)
            self.most_processes = max(self.most_processes, len(procs))
            n += 1
            self.stop.wait(self.interval)


def measure(pages: int, config: str, num_proc: int) -> dict:
    """One build in a fresh process; its peaks and time."""
    with tempfile.TemporaryDirectory(prefix="dogood-bench-memory-") as tmp:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(pages), config, str(num_proc), tmp]
        env = {**os.environ, "TQDM_DISABLE": "1"}
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        sampler = None
        try:
            sampler = TreeSampler(proc.pid)
            sampler.start()
        except ImportError:  # no psutil: rusage only
            pass
        stdout, stderr = proc.communicate()
        if sampler is not None:
            sampler.stop.set()
            sampler.join()
        if proc.returncode != 0:
            raise RuntimeError(f"build of {pages} pages ({config}, {num_proc} proc) failed:\n{stderr[-3000:]}")
        result = json.loads(stdout.strip().splitlines()[-1])
    result.update(pages=pages, config=config, num_proc=num_proc)
    result["pages_per_s"] = result["documents"] / result["seconds"]
    if sampler is not None:
        result["tree_rss_mb"] = sampler.peak_rss / 2**20
        result["tree_pss_mb"] = sampler.peak_pss / 2**20
        result["processes"] = sampler.most_processes
    return result


def growth(runs: list[dict]) -> list[dict]:
    """Per (config, num_proc): each measure's increase from the fewest pages to the most, and the verdict."""
    out = []
    keys = sorted({(r["config"], r["num_proc"]) for r in runs}, key=lambda k: (list(CHAINS).index(k[0]), k[1]))
    for config, num_proc in keys:
        group = sorted((r for r in runs if (r["config"], r["num_proc"]) == (config, num_proc)), key=lambda r: r["pages"])
        if len(group) < 2:
            continue
        small, large = group[0], group[-1]
        deltas = {m: large[m] - small[m] for m in MEASURES if small.get(m) is not None and large.get(m) is not None}
        out.append({"config": config, "num_proc": num_proc, "from_pages": small["pages"], "to_pages": large["pages"],
                    "growth_mb": deltas, "max_growth_mb": max(deltas.values()),
                    "pass": max(deltas.values()) < LIMIT_MB})
    return out


def markdown(runs: list[dict], growths: list[dict]) -> str:
    """The runs and the growth check as Markdown tables."""
    def mb(v):
        return "—" if v is None else f"{v:.0f}"

    lines = ["| config | workers | pages | s | pages/s | driver MB | largest worker MB | tree RSS MB | tree PSS MB |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in runs:
        lines.append(f"| {r['config']} | {r['num_proc']} | {r['pages']:,} | {r['seconds']:.1f} | {r['pages_per_s']:.0f} | "
                     f"{mb(r['driver_mb'])} | {mb(r.get('worker_mb'))} | {mb(r.get('tree_rss_mb'))} | "
                     f"{mb(r.get('tree_pss_mb'))} |")
    lines += ["", f"Growth from the fewest to the most pages (limit: < {LIMIT_MB} MB):", "",
              "| config | workers | pages | driver | largest worker | tree RSS | tree PSS | verdict |",
              "|---|---:|---|---:|---:|---:|---:|---|"]
    for g in growths:
        d = g["growth_mb"]
        lines.append(f"| {g['config']} | {g['num_proc']} | {g['from_pages']:,} → {g['to_pages']:,} | "
                     + " | ".join(f"{d[m]:+.0f} MB" if m in d else "—" for m in MEASURES)
                     + f" | {'PASS' if g['pass'] else 'FAIL'} |")
    return "\n".join(lines)


def run(pages: list[int], configs: list[str], num_procs: list[int], log=print) -> tuple[list[dict], list[dict]]:
    runs = []
    for config in configs:
        for num_proc in num_procs:
            for n in pages:
                r = measure(n, config, num_proc)
                runs.append(r)
                log(f"{config:<6} {num_proc} proc {n:>6} pages: {r['seconds']:6.1f} s {r['pages_per_s']:5.0f} pages/s  "
                    f"driver {r['driver_mb']:5.0f} MB  worker {r['worker_mb'] or 0:5.0f} MB  "
                    f"tree RSS {r.get('tree_rss_mb', 0):5.0f} MB  PSS {r.get('tree_pss_mb', 0):5.0f} MB")
    return runs, growth(runs)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        pages, config, num_proc, out = sys.argv[2:6]
        child(int(pages), config, int(num_proc), out)
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--configs", nargs="+", default=list(CHAINS), choices=list(CHAINS))
    parser.add_argument("--num-proc", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    print(f"{platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}")
    runs, growths = run(args.pages, args.configs, args.num_proc)
    print()
    print(markdown(runs, growths))
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": runs, "growth": growths}, indent=2))
    if not all(g["pass"] for g in growths):
        sys.exit(1)


if __name__ == "__main__":
    main()
