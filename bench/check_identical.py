"""Build every shipped recipe on real data and print the sha256 of each Parquet file, for byte-identical checks.

Run it before and after a change that must not change output, and compare::

    python bench/check_identical.py --out /tmp/before.json
    ... change ...
    python bench/check_identical.py --out /tmp/after.json --compare /tmp/before.json

FUNSD-style recipes are built on FUNSD test (``--funsd``), RVL-CDIP-style ones on
the shared RVL-CDIP pages (``--rvl-cdip``). ``bert_attack`` needs a masked LM's
weights, which no offline machine has: the script builds a 1-layer BERT with
fixed random weights (``--mlm``, made once and reused so both runs use the same
one) and points the configs at it. ``docvqa-t`` is left out: no DocVQA copy
exists offline, and its shifts are ``rvl-cdip-t``'s.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import string
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
RECIPES = {
    "funsd": "funsd", "funsd-t": "funsd", "funsd-l": "funsd", "funsd-i": "funsd", "funsd-fa": "funsd",
    "rvl-cdip-t": "rvl_cdip", "rvl-cdip-l": "rvl_cdip", "rvl-cdip-i1": "rvl_cdip", "rvl-cdip-i2": "rvl_cdip",
    "rvl-cdip-i3": "rvl_cdip", "funsd-c": "funsd", "funsd-p": "funsd", "rvl-cdip-p": "rvl_cdip",
    "funsd-l-mix": "funsd",  # funsd_mix: FUNSD test's entities (--funsd) on synthetic pages
}


def tiny_mlm(folder: Path) -> Path:
    """A 1-layer BERT with fixed random weights and a small WordPiece vocabulary (made once in ``folder``)."""
    if (folder / "config.json").exists():
        return folder
    import torch
    from nltk.corpus import stopwords
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    letters = sorted(set(string.ascii_lowercase + string.digits + string.punctuation))
    whole = ["report", "research", "tobacco", "date", "name", "company", "address", "city", "form", "paper"]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(stopwords.words("english")) + whole
    vocab = list(dict.fromkeys(vocab + letters + ["##" + c for c in letters]))
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), model_max_length=64)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64)
    BertForMaskedLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def recipe_with_local_mlm(name: str, mlm: Path, folder: Path) -> Path:
    """The shipped recipe ``name`` as a YAML file whose ``bert_attack`` steps use the local ``mlm``."""
    data = yaml.safe_load((ROOT / "recipes" / f"{name}.yaml").read_text(encoding="utf-8"))
    for chain in (data.get("configs") or {}).values():
        for step in chain or []:
            if isinstance(step, dict) and step.get("shift") == "bert_attack":
                step["model"] = str(mlm)
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def parquet_hashes(out: Path) -> dict[str, str]:
    return {str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*.parquet"))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSON file for the hashes")
    parser.add_argument("--compare", help="a JSON file of an earlier run: list differences, exit 1 if any")
    parser.add_argument("--recipes", nargs="*", default=list(RECIPES))
    parser.add_argument("--funsd", default=str(SHARED / "funsd" / "dataset"))
    parser.add_argument("--rvl-cdip", default=str(SHARED / "rvl_cdip"))
    parser.add_argument("--mlm", default=str(Path(tempfile.gettempdir()) / "dogood-check-mlm"))
    parser.add_argument("--num-proc", type=int, default=2)
    args = parser.parse_args(argv)
    os.environ.setdefault("DOGOOD_DATA_DIR", str(SHARED))
    os.environ.setdefault("NLTK_DATA", str(SHARED / "nltk_data"))

    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import load_recipe

    mlm = tiny_mlm(Path(args.mlm))
    sources = {"funsd": args.funsd, "rvl_cdip": args.rvl_cdip}
    hashes: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.recipes:
            start = time.perf_counter()
            recipe = load_recipe(str(recipe_with_local_mlm(name, mlm, Path(tmp))))
            out = Path(tmp) / "out" / name
            build(recipe, out, source_path=sources[RECIPES[name]], num_proc=args.num_proc, progress=False)
            hashes[name] = parquet_hashes(out)
            print(f"{name}: {len(hashes[name])} parquet files in {time.perf_counter() - start:.0f} s", flush=True)
    Path(args.out).write_text(json.dumps(hashes, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if not args.compare:
        return 0
    before = json.loads(Path(args.compare).read_text(encoding="utf-8"))
    differ = 0
    for name in sorted(hashes):  # the recipes this run built
        old, new = before.get(name, {}), hashes.get(name, {})
        for path in sorted(set(old) | set(new)):
            if old.get(path) != new.get(path):
                differ += 1
                print(f"differs: {name}/{path}")
    total = sum(len(v) for v in hashes.values())
    print(f"{total - differ} of {total} parquet files identical" if differ else f"all {total} parquet files identical")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
