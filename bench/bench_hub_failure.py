"""How fast a build fails when its Hub model cannot be reached, against a no-op command and the old way, in one run.

    python bench/bench_hub_failure.py [--source ../shared/data/funsd/dataset]

Each figure is the wall time of a fresh ``python -m dogood`` process:

- ``no-op``: ``dogood --version`` (interpreter and import start-up only);
- ``offline`` / ``closed port``: ``dogood build funsd-t --config bert_attack --limit 1`` with an empty Hub cache
  and ``HF_HUB_OFFLINE=1``, or ``HF_ENDPOINT`` on a closed local port (dogood's one probe, then the error);
- ``peer``: ``transformers.AutoConfig.from_pretrained('bert-base-uncased')`` against the closed port, which is
  what a build did before the probe (its download retries), each document again.

Reported: seconds and each as a ratio of the no-op.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=600)
    return time.perf_counter() - start, (done.stderr.strip().splitlines() or [""])[-1][:140]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", help="the FUNSD folder (default: found as dogood build finds it)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = {**os.environ, "HF_HUB_CACHE": os.path.join(tmp, "hub")}
        base.pop("HF_HUB_OFFLINE", None)
        closed = {**base, "HF_ENDPOINT": f"http://127.0.0.1:{_closed_port()}"}
        build = ["-m", "dogood", "build", "funsd-t", "--config", "bert_attack", "--limit", "1", "--quiet",
                 "--out", os.path.join(tmp, "out")] + (["--source", args.source] if args.source else [])
        runs = {
            "no-op (dogood --version)": _run(["-m", "dogood", "--version"], base),
            "offline (HF_HUB_OFFLINE=1)": _run(build, {**base, "HF_HUB_OFFLINE": "1"}),
            "closed port (HF_ENDPOINT)": _run(build, closed),
            "peer: from_pretrained, closed port": _run(
                ["-c", "from transformers import AutoConfig; AutoConfig.from_pretrained('bert-base-uncased')"], closed),
        }
    noop = runs["no-op (dogood --version)"][0]
    for name, (seconds, last) in runs.items():
        print(f"{name:<36} {seconds:6.1f} s  {seconds / noop:5.1f} x no-op   {last}")


if __name__ == "__main__":
    main()
