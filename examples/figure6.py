r"""Do-GOOD's Figure 6 with dogood: add shifted training data, score ID against OOD.

Do-GOOD (He et al. 2023, section 5, "Effect of Incremental Training", Figure 6) adds OOD samples
to FUNSD's training set and finds the score on OOD test sets rises. This script does the same
with a dogood shift family:

1. builds FUNSD train with the family's shifts, ``--copies`` shifted rows per form and shift
   (``splits: [train]``, ``copies: k``), the same shifts on FUNSD test (the OOD test sets, one
   row per form) and FUNSD test unshifted (the ID set);
2. trains the model twice: on FUNSD train alone ("FUNSD train"), and on FUNSD train plus the
   shifted train rows ("+ shifted train");
3. scores both with :func:`dogood.evaluate` (paired by document, 95% bootstrap intervals) and
   prints ID F1, OOD F1 and the OOD gain of the second regime over the first, with a paired
   bootstrap interval (:func:`dogood.compare`: both models scored on the same resampled documents).

It uses dogood's public API only (``import dogood``).

Unlike the paper (20 FUNSD-R/H forms added, averaged over 5 draws), the added data here is
generated: every train form under every shift of the family. ``--model baseline`` (default)
trains dogood's CRF baseline, offline in a minute or two on CPU. ``--model NAME_OR_PATH``
fine-tunes a LayoutLMv3 checkpoint (e.g. ``microsoft/layoutlmv3-base``; GPU advised) and
scores it through dogood's Hugging Face adapter; ``--model tiny`` does so with a small random
LayoutLMv3 (offline, a smoke test only: its scores mean nothing).

    python examples/figure6.py --out runs/figure6                 # CRF baseline, layout shifts
    python examples/figure6.py --family text --out runs/fig6-text
    python examples/figure6.py --model microsoft/layoutlmv3-base --epochs 20 --out runs/fig6-lmv3

Writes ``OUT/figure6.json`` and ``OUT/figure6.md`` (the table) and each regime's ``dogood eval``
report under ``OUT/eval/<regime>/``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import dogood

#: Shift families: config -> chain, built on train (with copies) and test (the OOD sets).
FAMILIES = {
    "layout": {  # Do-GOOD 3.3's merge (as funsd-l) and two OCR-level shifts of the form-attack paper
        "merge": [{"shift": "merge", "lambda_x": 10, "lambda_y": 5, "level": "entity"}],
        "global_shuffle": [{"shift": "global_shuffle"}],
        "margin_padding": [{"shift": "margin_padding", "r": 0.3}],
    },
    "text": {  # Do-GOOD 3.2's word swaps (as funsd-t), 10% of the words
        "char_deletion": [{"shift": "char_deletion", "fraction": 0.1}],
        "homoglyph_swap": [{"shift": "homoglyph_swap", "fraction": 0.1}],
        "number_swap": [{"shift": "number_swap", "fraction": 0.1}],
    },
}
REGIMES = ("FUNSD train", "+ shifted train")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="folder for the builds, models, reports and the table")
    p.add_argument("--family", choices=sorted(FAMILIES), default="layout",
                   help="shift family to mix in (default: layout)")
    p.add_argument("--configs", help="comma list: only these shifts of the family")
    p.add_argument("--copies", type=int, default=1, help="shifted rows per train form and shift (default: 1)")
    p.add_argument("--model", default="baseline",
                   help="'baseline' (dogood's CRF, default), 'tiny' (random small LayoutLMv3, offline smoke test), "
                        "or a LayoutLMv3 Hub id or folder to fine-tune")
    p.add_argument("--source", help="the FUNSD folder (default: where dogood finds it)")
    p.add_argument("--limit", type=int, help="only the first N train forms (and N test forms)")
    p.add_argument("--seed", type=int, default=0, help="build seed (the shifts' draws)")
    p.add_argument("--num-proc", type=int, default=1, help="worker processes for the builds")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples (0: no intervals)")
    p.add_argument("--max-iterations", type=int, default=200, help="CRF: L-BFGS iterations (default 200)")
    p.add_argument("--epochs", type=float, default=10, help="LayoutLMv3: passes over the training rows")
    p.add_argument("--batch-size", type=int, default=2, help="LayoutLMv3: batch size")
    p.add_argument("--lr", type=float, default=1e-5, help="LayoutLMv3: AdamW learning rate")
    return p.parse_args(argv)


def shift_recipe(family: str, configs: list[str], copies: int, seed: int):
    """The recipe of the family's shifts on FUNSD: built on train with ``copies``, on test with one copy."""
    return dogood.load_recipe({"name": f"funsd-figure6-{family}", "version": "1.0.0", "source": {"kind": "funsd"},
                         "splits": ["train"], "seed": seed, "copies": copies,
                         "configs": {c: FAMILIES[family][c] for c in configs},
                         "description": f"FUNSD under Do-GOOD-style {family} shifts, for training-time augmentation"})


def build_data(args, configs: list[str]) -> dict[str, Path]:
    """Build the shifted train rows, the OOD test sets and the ID test set under ``OUT/data``."""
    data = Path(args.out) / "data"
    recipe = shift_recipe(args.family, configs, args.copies, args.seed)
    common = dict(source_path=args.source, limit=args.limit, num_proc=args.num_proc, progress=False, overwrite=True)
    paths = {"train": data / "train-shifted", "ood": data / "test-ood", "id": data / "test-id"}
    dogood.build(recipe, paths["train"], splits=["train"], **common)
    dogood.build(recipe, paths["ood"], splits=["test"], copies=1, **common)
    dogood.build("funsd", paths["id"], **common)
    if args.model != "baseline":  # FUNSD train as rows, for the LayoutLMv3 path
        paths["train-id"] = data / "train-id"
        dogood.build("funsd", paths["train-id"], splits=["train"], **common)
    return paths


def training_documents(args, paths: dict[str, Path], configs: list[str]) -> dict[str, list]:
    """Each regime's training documents: FUNSD train; FUNSD train and every shifted copy."""
    plain = dogood.read_documents("funsd", "train", source_path=args.source, limit=args.limit)
    shifted = [doc for config in configs for doc in dogood.read_documents(f"{paths['train']}:{config}", "train")]
    return {REGIMES[0]: plain, REGIMES[1]: plain + shifted}


def train_crf(docs: list, max_iterations: int, path: Path):
    dogood.train_baseline(docs, max_iterations=max_iterations).save(path)
    return dogood.load_model(path)


def training_rows(paths: dict[str, Path], configs: list[str], shifted: bool):
    """A regime's training rows as built (segment-level boxes): FUNSD train, and the shifted copies."""
    from datasets import concatenate_datasets, load_dataset

    parts = [load_dataset(str(paths["train-id"]), split="train")]
    if shifted:
        parts += [load_dataset(str(paths["train"]), c, split="train") for c in configs]
    return concatenate_datasets(parts)


def train_layoutlmv3(args, rows, folder: Path):
    """Fine-tune LayoutLMv3 on built ``rows``, save it to ``folder``, load it back through dogood's adapter."""
    import warnings

    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from train_layoutlmv3 import encode, tiny_model, tiny_processor

    warnings.filterwarnings("ignore", message="The `device` argument is deprecated")  # transformers 4.x, per call
    names = rows.features["ner_tags"].feature.names
    torch.manual_seed(0)
    if args.model == "tiny":
        processor = tiny_processor(rows["tokens"])
        model = tiny_model(processor.tokenizer, names)
    else:
        from transformers import LayoutLMv3ForTokenClassification, LayoutLMv3Processor

        processor = LayoutLMv3Processor.from_pretrained(args.model, apply_ocr=False)
        model = LayoutLMv3ForTokenClassification.from_pretrained(
            args.model, num_labels=len(names), id2label=dict(enumerate(names)),
            label2id={n: i for i, n in enumerate(names)})
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model.to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3 if args.model == "tiny" else args.lr)
    steps = max(1, round(args.epochs * len(rows) / args.batch_size))
    order = np.random.default_rng(0).permutation(len(rows))
    for step in range(steps):
        start = step * args.batch_size % len(rows)
        batch = encode(processor, rows[[int(i) for i in order[start:start + args.batch_size]]])
        loss = model(**{k: v.to(device) for k, v in batch.items()}).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return dogood.load_model(str(folder), task="token", box_level="segment", device=device)


def run(args) -> dict:
    started = time.perf_counter()
    configs = [c.strip() for c in args.configs.split(",")] if args.configs else list(FAMILIES[args.family])
    unknown = [c for c in configs if c not in FAMILIES[args.family]]
    if unknown:
        raise SystemExit(f"figure6: error: family {args.family!r} has no shift {', '.join(unknown)}; "
                         f"it has {', '.join(FAMILIES[args.family])}")
    out = Path(args.out)
    paths = build_data(args, configs)
    built = time.perf_counter()
    regimes = training_documents(args, paths, configs)
    result = {"family": args.family, "configs": configs, "copies": args.copies, "model": args.model,
              "limit": args.limit, "seed": args.seed, "bootstrap": args.bootstrap, "regimes": {}}
    models = {}
    for k, (regime, docs) in enumerate(regimes.items()):
        t0 = time.perf_counter()
        folder = out / "models"
        folder.mkdir(parents=True, exist_ok=True)
        if args.model == "baseline":
            model = train_crf(docs, args.max_iterations, folder / f"regime{k}.dogood-model")
        else:
            model = train_layoutlmv3(args, training_rows(paths, configs, k == 1), folder / f"regime{k}")
        trained = time.perf_counter() - t0
        report = dogood.evaluate(model, str(paths["id"]), str(paths["ood"]), resamples=args.bootstrap, seed=0)
        report.write(out / "eval" / f"regime{k}")
        id_row, *ood_rows = report.rows()
        ood = {r["config"]: {"f1": r["value"], "ci": (r.get("ci") or {}).get("value"), "documents": r["documents"]}
               for r in ood_rows}
        result["regimes"][regime] = {
            "training_documents": len(docs), "train_seconds": round(trained, 1),
            "id_f1": id_row["value"], "id_ci": (id_row.get("ci") or {}).get("value"),
            "ood": ood, "ood_mean_f1": float(np.mean([o["f1"] for o in ood.values()])),
        }
        models[regime] = model
    base, aug = (result["regimes"][r] for r in REGIMES)
    result["gain"] = {"id": aug["id_f1"] - base["id_f1"], "ood_mean": aug["ood_mean_f1"] - base["ood_mean_f1"],
                      "ood": {}}
    paired = dogood.compare(models[REGIMES[0]], models[REGIMES[1]], str(paths["ood"]), resamples=args.bootstrap,
                            seed=0)
    for config in base["ood"]:
        gain = {"value": aug["ood"][config]["f1"] - base["ood"][config]["f1"]}
        if args.bootstrap:
            gain["ci"] = paired[config]["ci"]
        result["gain"]["ood"][config] = gain
    result["seconds"] = {"build": round(built - started, 1), "total": round(time.perf_counter() - started, 1)}
    (out / "figure6.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    (out / "figure6.md").write_text(table(result), encoding="utf-8")
    return result


def _pct(x) -> str:
    return f"{x:.2f}"  # dogood's reports are in percent


def _ci(ci) -> str:
    return f" [{ci[0]:.1f}, {ci[1]:.1f}]" if ci else ""


def table(result: dict) -> str:
    """The figure's numbers as a Markdown table: entity F1 (%) per regime, ID and each OOD set, and the gain."""
    configs = list(result["gain"]["ood"])
    head = ["training data", "documents", "ID F1"] + [f"OOD F1 {c}" for c in configs] + ["OOD mean"]
    lines = [f"Do-GOOD Figure 6 with dogood: {result['model']}, {result['family']} shifts "
             f"({', '.join(configs)}), {result['copies']} shifted cop{'y' if result['copies'] == 1 else 'ies'} "
             "per train form and shift; entity F1 (%), 95% bootstrap intervals", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for regime, r in result["regimes"].items():
        cells = [regime, str(r["training_documents"]), _pct(r["id_f1"]) + _ci(r["id_ci"])]
        cells += [_pct(r["ood"][c]["f1"]) + _ci(r["ood"][c]["ci"]) for c in configs]
        lines.append("| " + " | ".join(cells + [_pct(r["ood_mean_f1"])]) + " |")
    gain = result["gain"]
    cells = ["gain (points)", "", f"{gain['id']:+.2f}"]
    cells += [f"{gain['ood'][c]['value']:+.2f}" + _ci(gain["ood"][c].get("ci")) for c in configs]
    lines.append("| " + " | ".join(cells + [f"{gain['ood_mean']:+.2f}"]) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    import datasets

    args = parse_args(argv)
    datasets.disable_progress_bars()
    if args.copies < 1 or (args.limit is not None and args.limit < 1):
        raise SystemExit("figure6: error: --copies and --limit must be at least 1")
    result = run(args)
    print(table(result))
    print(f"wrote {Path(args.out) / 'figure6.md'} and figure6.json ({result['seconds']['total']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
