"""Documents per second of a ``--ray`` build (actors read, shift and write whole shards) beside its peer, the
local process pool, in the same run, with the same number of workers.

    DOGOOD_DATA_DIR=../shared/data python bench/bench_ray.py [--docs 40] [--workers 2] [--split train]

The recipe is FUNSD-L's ``merge`` and FUNSD-I's ``distort`` on the first ``--docs`` FUNSD forms of ``--split``, in shards
of 5. Ray is started (and its actors' start-up, which prepares the chains, timed) before the Ray build; both
builds' outputs are checked byte-identical. The figure to read is the ratio (Ray / pool): what moving the
shard writing to the actors and the files through the object store costs or saves.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from dogood.pipeline.build import build
from dogood.pipeline.ray_data import ensure_ray
from dogood.pipeline.recipe import load_recipe, parse_recipe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--split", default="test", help="FUNSD split: test (50 forms) or train (149)")
    args = parser.parse_args()
    configs = {"merge": load_recipe("funsd-l").configs["merge"], "distort": load_recipe("funsd-i").configs["distort"]}
    recipe = parse_recipe({"name": "funsd-bench-ray", "version": "1.0.0", "source": {"kind": "funsd"},
                           "splits": [args.split], "seed": 0, "shard_size": 5, "configs": configs})
    with tempfile.TemporaryDirectory() as tmp:
        pool_out, ray_out = Path(tmp, "pool", "out"), Path(tmp, "ray", "out")
        t = time.perf_counter()
        build(recipe, pool_out, limit=args.docs, num_proc=args.workers, progress=False)
        pool_s = time.perf_counter() - t
        t = time.perf_counter()
        ray = ensure_ray(None, num_cpus=args.workers)
        start_s = time.perf_counter() - t
        t = time.perf_counter()
        build(recipe, ray_out, limit=args.docs, num_proc=args.workers, progress=False, ray="local")
        ray_s = time.perf_counter() - t
        ray.shutdown()
        same = all((pool_out / p.relative_to(ray_out)).read_bytes() == p.read_bytes()
                   for p in ray_out.rglob("*") if p.is_file())
    print(f"{args.docs} FUNSD {args.split} forms, merge + distort, {args.workers} workers, load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"  process pool: {pool_s:6.1f} s  {args.docs / pool_s:5.2f} docs/s")
    print(f"  Ray actors:   {ray_s:6.1f} s  {args.docs / ray_s:5.2f} docs/s  (Ray start {start_s:.1f} s, not counted)")
    print(f"  Ray / pool time: {ray_s / pool_s:.2f}; byte-identical: {same}")


if __name__ == "__main__":
    main()
