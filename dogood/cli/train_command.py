"""``dogood train-baseline``: train the CRF baseline (FUNSD) or the document baseline (RVL-CDIP)."""

from __future__ import annotations

import sys
from pathlib import Path

from dogood.cli.common import count
from dogood.core.errors import DogoodError


def add_parser(sub) -> None:
    p = sub.add_parser("train-baseline", help="train dogood's CRF baseline on FUNSD train (or its document baseline "
                                              "on RVL-CDIP train) and save it to a file")
    p.add_argument("--task", choices=("token", "document"), default="token",
                   help="token: the CRF tagger on FUNSD (default); document: the page classifier on RVL-CDIP")
    p.add_argument("--source", help="the FUNSD (or, with --task document, RVL-CDIP) dataset folder (default: found "
                                    "as `dogood build` finds it); with --task document, 'synthetic' trains on "
                                    "generated pages (a smoke test only)")
    p.add_argument("--pages", type=count, default=400,
                   help="with --source synthetic: pages per split (default: 400)")
    p.add_argument("--split", default="train", help="split to train on (default: train)")
    p.add_argument("--box-level", choices=("segment", "word", "record"),
                   help="the CRF's boxes: the bboxes of the split built at this convention, the one the data it will "
                        "be evaluated on has (default: segment, FUNSD-style data's); record: the record's own pixel "
                        "word boxes, what the Move shift's default scorer reads")
    p.add_argument("--out", help="model file (default: the one `--model baseline` loads, in the dogood cache)")
    p.add_argument("--c1", type=float, help="L1 regularisation (default: the baseline's)")
    p.add_argument("--c2", type=float, help="L2 regularisation (default: the baseline's)")
    p.add_argument("--max-iterations", type=int, help="L-BFGS iterations (default: the baseline's)")
    p.add_argument("--limit", type=count, help="train on the first N documents only")
    p.add_argument("--eval-split", default="test",
                   help="split to report entity F1 (document: accuracy) on after training ('none' to skip)")
    p.set_defaults(func=cmd_train_baseline)


def _check_model_file(out: Path) -> None:
    """Refuse to replace a file that is not a dogood model (a zip holding a baseline's members)."""
    from dogood.core.fs import FileRefused, open_zip
    from dogood.models import baseline_kind
    from dogood.models.baseline import META_MEMBER, MODEL_MEMBER
    from dogood.models.model_zip import MAX_MEMBERS

    if not (out.exists() or out.is_symlink()):
        return
    try:
        with open_zip(out, what="model file", max_members=MAX_MEMBERS) as zf:
            ours = {META_MEMBER, MODEL_MEMBER} <= set(zf.namelist())
    except (OSError, FileRefused):
        ours = False
    ours = ours or (out.is_file() and baseline_kind(out) is not None)
    if not ours or out.is_symlink():
        raise DogoodError(f"--out {out} exists and is not a dogood model file; refusing to replace it")


def _document_source(args, split: str):
    """The pages ``train-baseline --task document`` reads: an RVL-CDIP folder's split, or synthetic pages."""
    if args.source == "synthetic":
        from dogood.sources.synthetic import SyntheticSource

        return SyntheticSource(pages=args.pages, split=split)
    from dogood.sources.rvl_cdip import RvlCdipSource

    return RvlCdipSource(root=args.source, split=split)


def cmd_train_document_baseline(args) -> int:
    import time

    from dogood.core.schema import RVL_CDIP_CLASSES
    from dogood.eval.metrics import accuracy
    from dogood.models import default_document_baseline_path
    from dogood.models.doc_baseline import train_document_baseline
    from dogood.page.ocr import report_tesseract_runs, tesseract_runs

    given = [f"--{k.replace('_', '-')}" for k in ("c1", "c2", "max_iterations", "box_level")
             if getattr(args, k) is not None]
    if given:
        raise DogoodError(f"{', '.join(given)} apply to the CRF (--task token), not to the document baseline")
    if args.out:
        _check_model_file(Path(args.out))
    source = _document_source(args, args.split)
    ids = list(source.ids())
    ids = ids[: args.limit] if args.limit else ids
    start = time.perf_counter()
    pages, ocr_seconds = tesseract_runs()
    try:
        model = train_document_baseline(source.load(i) for i in ids)
    except ValueError as exc:
        raise DogoodError(f"cannot train the document baseline on {args.source or 'RVL-CDIP'} {args.split}: {exc}") from None
    seconds = time.perf_counter() - start
    report_tesseract_runs(tesseract_runs()[0] - pages, tesseract_runs()[1] - ocr_seconds, of=len(ids))
    out = Path(args.out) if args.out else default_document_baseline_path()
    model.save(out)
    what = "synthetic" if args.source == "synthetic" else "RVL-CDIP"
    print(f"trained {model.name} on {len(ids)} {what} {args.split} pages ({len(model.classes)} classes) "
          f"in {seconds:.0f} s -> {out}")
    if args.eval_split and args.eval_split != "none":
        test = _document_source(args, args.eval_split)
        same = getattr(test, "labels_path", None)
        if same is not None and same == getattr(source, "labels_path", None):
            print(f"dogood: warning: --split {args.split} and --eval-split {args.eval_split} both read {same}: "
                  "the accuracy below is on the training pages", file=sys.stderr)
        test_docs = [test.load(i) for i in test.ids()]
        preds = model.predict(test_docs)
        scores = accuracy([d.label for d in test_docs], [preds[d.id].label for d in test_docs],
                          labels=list(RVL_CDIP_CLASSES))
        print(f"{what} {args.eval_split} ({len(test_docs)} pages): accuracy {100 * scores['accuracy']:.2f} "
              f"(chance with {len(RVL_CDIP_CLASSES)} balanced classes: {100 / len(RVL_CDIP_CLASSES):.2f})")
    return 0


def cmd_train_baseline(args) -> int:
    import time

    if args.task == "document":
        return cmd_train_document_baseline(args)
    if args.source == "synthetic":
        raise DogoodError("--source synthetic trains the document baseline only: add --task document")

    from dogood.models import default_baseline_path
    from dogood.models.baseline import DEFAULT_BOX_LEVEL, train_baseline
    from dogood.sources.funsd import FunsdSource

    if args.out:
        _check_model_file(Path(args.out))
    source = FunsdSource(root=args.source, split=args.split)
    ids = source.ids()[: args.limit] if args.limit else source.ids()
    docs = [source.load(i) for i in ids]
    options = {k: v for k, v in (("c1", args.c1), ("c2", args.c2), ("max_iterations", args.max_iterations)) if v is not None}
    level = args.box_level or DEFAULT_BOX_LEVEL
    start = time.perf_counter()
    model = train_baseline(docs, box_level=level, **options)
    seconds = time.perf_counter() - start
    out = Path(args.out) if args.out else default_baseline_path(level)
    model.save(out)
    print(f"trained {model.name} ({level} boxes) on {len(docs)} FUNSD {args.split} documents in {seconds:.0f} s "
          f"-> {out}")
    if args.eval_split and args.eval_split != "none":
        from dogood.eval.metrics import funsd_entity_scores

        test = FunsdSource(root=args.source, split=args.eval_split)
        test_docs = [test.load(i) for i in test.ids()]
        preds = model.predict(test_docs)
        scores = funsd_entity_scores(test_docs, {k: p.tags for k, p in preds.items()})
        per_label = ", ".join(f"{k} {100 * v['f1']:.1f}" for k, v in scores["per_label"].items())
        print(f"FUNSD {args.eval_split} ({len(test_docs)} documents): entity precision {100 * scores['precision']:.2f}, "
              f"recall {100 * scores['recall']:.2f}, F1 {100 * scores['f1']:.2f} ({per_label})")
    return 0
