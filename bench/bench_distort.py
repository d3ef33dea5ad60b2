"""CPU milliseconds a page of ``distort`` on FUNSD test forms, this checkout against another, alternated in
subprocesses so that both see the same load (issue 31, part 3).

    DOGOOD_DATA_DIR=../shared/data python bench/bench_distort.py --against ../main [--pages 20] [--rounds 5]

Each subprocess loads ``--pages`` forms, applies ``{"shift": "distort"}`` (defaults) once to each (warm-up:
caches fill, as in a training loader's later epochs), then times a second pass with the same seeds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = """
import sys, time
import numpy as np
from dogood.sources.funsd import FunsdSource
from dogood.shifts import make_shift
import dogood.shifts.image.distort
print(dogood.__file__)
source = FunsdSource(split="test")
docs = [source.load(i) for i in source.ids()[:int(sys.argv[1])]]
for d in docs:
    d.image.to_array()
shift = make_shift({"shift": "distort"})
def run():
    for k, d in enumerate(docs):
        shift.apply(d, np.random.default_rng(k))
run()
start = time.process_time()
run()
print((time.process_time() - start) / len(docs) * 1000)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", required=True, help="another checkout of dogood (its root folder)")
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    trees = {"this checkout": str(ROOT), "against": str(Path(args.against).resolve())}
    times: dict[str, list[float]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            env = dict(os.environ, PYTHONPATH=tree)
            out = subprocess.run([sys.executable, "-c", _CHILD, str(args.pages)], env=env, cwd=tree, check=True,
                                 capture_output=True, text=True)  # cwd: ``-c`` puts it first on sys.path
            where, ms = out.stdout.split()
            if not where.startswith(tree):
                raise SystemExit(f"the run for {tree} imported {where}")
            times[name].append(float(ms))
    print(f"load average {os.getloadavg()[0]:.1f}; {args.pages} FUNSD test pages, median of {args.rounds} rounds")
    for name, values in times.items():
        print(f"{name} ({trees[name]}): {statistics.median(values):.1f} ms CPU a page "
              f"({', '.join(f'{v:.1f}' for v in values)})")
    print(f"ratio: {statistics.median(times['against']) / statistics.median(times['this checkout']):.2f}")


if __name__ == "__main__":
    main()
