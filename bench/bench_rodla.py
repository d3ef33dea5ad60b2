"""Speed against RoDLA's perturbation code: pages per CPU second for each perturbation both have, same pages, one run.

    DOGOOD_DATA_DIR=../shared/data python bench/bench_rodla.py --rodla PATH/TO/RoDLA [--ocrodeg PATH/TO/ocrodeg]
        [--pages 5] [--repeat 2] [--markdown]

RoDLA (Chen et al., CVPR 2024; github.com/yufanchen96/RoDLA) is read from a checkout given on the command line and
never copied here. Its leaf files under ``perturbation/`` are loaded by path under private names (its package and
entry script do not import, see its issue #2); perturbations whose third-party code is missing are skipped with the
reason: imgaug (warping, keystoning: ``pip install --no-deps imgaug==0.4.0 shapely``; under numpy 2 this script
sets the ``np.sctypes`` imgaug 0.4.0 reads at import), ocrodeg (speckle, texture: not on PyPI, pass
``--ocrodeg`` a checkout of github.com/NVlabs/ocrodeg), and detectron2, which ``spatial.py`` imports at the top:
stand-ins are put in its place, and rotation runs on :class:`RotationStandIn`, our own few lines doing what
detectron2's ``RotationTransform`` does to an image (the canvas expanded to the rounded turned bounds, black
corners, bilinear). RoDLA's ``background`` is left out: it raises ``NameError`` on every call.

Each RoDLA function runs at its degrees 1, 2 and 3, each dogood counterpart at levels 1, 3 and 5 (the same
strength scale: RoDLA maps degree d to 2d - 1), on the first ``--pages`` FUNSD test forms, ``--repeat`` times each
after one warm-up call. Inputs are what each tool reads: RoDLA a BGR page as ``cv2.imread`` gives it (its code
needs three channels), dogood the page as FUNSD stores it (grey); RoDLA is seeded through ``random``, numpy and
imgaug's global generators, dogood through the step's generator. The spatial perturbations carry the page's word
boxes on both sides (RoDLA's warping and keystoning take them as imgaug boxes and polygons; its rotation is timed on
the image alone, as detectron2's box code is not here). Time is ``time.process_time`` (CPU seconds of every thread
of the process) with OpenCV on one thread for both. Printed: pages per CPU second per perturbation and level, and
over the three levels, and dogood's speed over RoDLA's.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import random
import statistics
import sys
import time
import types
from pathlib import Path

import cv2
import numpy as np

from dogood.shifts import make_shift
from dogood.sources.funsd import FunsdSource

#: Each perturbation both have: (RoDLA's file, function), dogood's chain step, and whether it moves boxes.
PAIRS = {
    "rotation": (("spatial", "apply_rotation"), {"shift": "rotate"}, True),
    "warping": (("spatial", "apply_warping"), {"shift": "distort", "kinds": ["fold", "curve"]}, True),
    "keystoning": (("spatial", "apply_keystoning"), {"shift": "distort", "kinds": ["perspective"]}, True),
    "watermark": (("content", "add_watermark"), {"shift": "watermark"}, False),
    "ink_holdout": (("inconsistency", "apply_ink_holdout"), {"shift": "scan_quality", "kinds": ["low_ink"]}, False),
    "ink_bleeding": (("inconsistency", "apply_ink_bleeding"), {"shift": "scan_quality", "kinds": ["ink_bleed"]},
                     False),
    "illumination": (("inconsistency", "apply_illumination"), {"shift": "illumination"}, False),
    "shadow": (("inconsistency", "apply_illumination"), {"shift": "shadow"}, False),
    "defocus": (("blur", "apply_defocus"), {"shift": "defocus"}, False),
    "vibration": (("blur", "apply_vibration"), {"shift": "motion_blur"}, False),
    "speckle": (("noise", "apply_speckle"), {"shift": "speckle"}, False),
    "texture": (("noise", "apply_texture"), {"shift": "paper_texture"}, False),
}
DEGREES = (1, 2, 3)


class RotationStandIn:
    """What detectron2's ``RotationTransform(h, w, angle)`` (expand, bilinear, no centre given) does to an image, in
    our own words: turn about the page centre, the canvas enlarged to the rounded bounds of the turned page, the
    turned centre put at the new canvas's centre, black outside; pixel centres offset by half a pixel, as detectron2
    does for OpenCV."""

    def __init__(self, h: int, w: int, angle: float):
        rad = math.radians(angle)
        c, s = abs(math.cos(rad)), abs(math.sin(rad))
        self.size = (int(np.rint(h * s + w * c)), int(np.rint(h * c + w * s)))
        centre = np.array([w / 2 - 0.5, h / 2 - 0.5])
        self.matrix = cv2.getRotationMatrix2D((float(centre[0]), float(centre[1])), angle, 1.0)
        turned = self.matrix[:, :2] @ centre + self.matrix[:, 2]
        self.matrix[:, 2] += np.array([self.size[0] / 2 - 0.5, self.size[1] / 2 - 0.5]) - turned

    def apply_image(self, image):
        return cv2.warpAffine(image, self.matrix, self.size, flags=cv2.INTER_LINEAR)


def _stub_detectron2() -> None:
    """Modules named as ``spatial.py`` imports them, holding the stand-in rotation and names never called here."""

    def unused(*args, **kwargs):
        raise NotImplementedError("detectron2 is not installed; this bench does not use it")

    names = {
        "detectron2": {}, "detectron2.data": {"MetadataCatalog": None, "DatasetCatalog": None},
        "detectron2.data.transforms": {"RotationTransform": RotationStandIn},
        "detectron2.data.detection_utils": {"transform_instance_annotations": unused},
        "detectron2.data.datasets": {"register_coco_instances": unused},
        "detectron2.data.datasets.coco": {"convert_to_coco_json": unused, "convert_to_coco_dict": unused},
    }
    for name, attrs in names.items():
        if name in sys.modules:
            continue
        module = types.ModuleType(name)
        module.__dict__.update(attrs)
        sys.modules[name] = module


def _imgaug_ready() -> str | None:
    """Import imgaug (setting numpy's removed ``sctypes`` first under numpy 2); the reason when it cannot be had."""
    if not hasattr(np, "sctypes"):
        np.sctypes = {"int": [np.int8, np.int16, np.int32, np.int64], "uint": [np.uint8, np.uint16, np.uint32,
                                                                                np.uint64],
                      "float": [np.float16, np.float32, np.float64], "complex": [np.complex64, np.complex128],
                      "others": [bool, object, bytes, str, np.void]}
    try:
        import imgaug  # noqa: F401
        import imgaug.augmenters  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - any failure means: skip with the reason
        return f"imgaug unavailable ({type(exc).__name__}: {exc})"
    return None


def load_rodla(checkout: Path, ocrodeg: Path | None) -> tuple[dict[str, types.ModuleType], dict[str, str]]:
    """RoDLA's leaf modules loaded by path (``rodla_<name>``), and why any could not be."""
    modules, missing = {}, {}
    if ocrodeg is not None:
        sys.path.insert(0, str(ocrodeg))
    _stub_detectron2()
    imgaug_problem = _imgaug_ready()
    for name in ("spatial", "content", "inconsistency", "blur", "noise"):
        if name == "spatial" and imgaug_problem:
            missing[name] = imgaug_problem
            continue
        spec = importlib.util.spec_from_file_location(f"rodla_{name}", checkout / "perturbation" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # noqa: BLE001
            missing[name] = f"{type(exc).__name__}: {exc}"
            continue
        modules[name] = module
    return modules, missing


def rodla_annos(doc) -> list[dict]:
    """The page's word boxes as RoDLA's spatial functions read annotations (XYWH box, a polygon of its corners)."""
    out = []
    for x0, y0, x1, y1 in doc.boxes.tolist():
        out.append({"bbox": [x0, y0, x1 - x0, y1 - y0], "bbox_mode": 1,
                    "segmentation": [[x0, y0, x1, y0, x1, y1, x0, y1]]})
    return out


def seed_all(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    if "imgaug" in sys.modules:
        sys.modules["imgaug"].random.seed(seed)


def cpu_seconds(fn, repeat: int) -> float:
    """Median CPU seconds of ``fn()`` over ``repeat`` calls, after one warm-up call."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_root = Path(os.environ.get("DOGOOD_DATA_DIR", Path(__file__).resolve().parents[2] / "shared/data"))
    parser.add_argument("--rodla", type=Path, default=None, help="a checkout of github.com/yufanchen96/RoDLA")
    parser.add_argument("--ocrodeg", type=Path, default=None, help="a checkout of github.com/NVlabs/ocrodeg")
    parser.add_argument("--source", default=str(default_root / "funsd/dataset"))
    parser.add_argument("--pages", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--only", nargs="*", default=None, help="perturbations to time (default: all)")
    args = parser.parse_args()
    cv2.setNumThreads(1)

    modules, missing = load_rodla(args.rodla, args.ocrodeg) if args.rodla and args.rodla.is_dir() else ({}, {})
    if not args.rodla or not args.rodla.is_dir():
        print(f"no RoDLA checkout at {args.rodla}: timing dogood alone")
    for name, why in missing.items():
        print(f"RoDLA perturbation/{name}.py skipped: {why}")
    source = FunsdSource(root=args.source, split="test")
    docs = [source.load(i) for i in source.ids()[: args.pages]]
    greys = [d.image.to_array() for d in docs]
    bgrs = [cv2.cvtColor(g, cv2.COLOR_GRAY2BGR) for g in greys]
    annos = [rodla_annos(d) for d in docs]

    rows = []
    for name, ((file, function), step, spatial) in PAIRS.items():
        if args.only and name not in args.only:
            continue
        fn = getattr(modules.get(file), function, None)
        row = {"name": name, "rodla": f"{file}.{function}", "dogood": step["shift"], "levels": []}
        for degree in DEGREES:
            level = 2 * degree - 1
            shift = make_shift({**step, **make_shift(step).severities[level]})
            shift.prepare()
            dogood = sum(cpu_seconds(lambda d=d, k=k: shift.apply(d, np.random.default_rng(k)), args.repeat)
                         for k, d in enumerate(docs))
            theirs = None
            if fn is not None:
                def call(k, page, boxes):
                    seed_all(k)
                    if spatial and function != "apply_rotation":
                        return fn(page, degree, boxes)
                    return fn(page, degree)

                try:
                    theirs = sum(cpu_seconds(lambda k=k, p=p, b=b: call(k, p, b), args.repeat)
                                 for k, (p, b) in enumerate(zip(bgrs, annos)))
                except Exception as exc:  # noqa: BLE001
                    print(f"RoDLA {function} at degree {degree} failed: {type(exc).__name__}: {exc}")
            row["levels"].append((degree, level, theirs, dogood))
        rows.append(row)
        print(_line(row, len(docs)), flush=True)

    print()
    print(f"{len(docs)} FUNSD test pages, OpenCV on 1 thread, CPU seconds (time.process_time), median of "
          f"{args.repeat} after a warm-up")
    print("| perturbation | RoDLA function | dogood shift | RoDLA pages/CPU s (deg. 1, 2, 3) | dogood pages/CPU s "
          "(levels 1, 3, 5) | over the levels: RoDLA | dogood | dogood / RoDLA |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(_line(row, len(docs)))


def _line(row: dict, pages: int) -> str:
    def rate(seconds):
        return "–" if seconds is None else f"{pages / seconds:.1f}" if seconds > 0 else "∞"

    theirs = [t for _, _, t, _ in row["levels"]]
    ours = [o for _, _, _, o in row["levels"]]
    all_theirs = None if None in theirs else sum(theirs)
    ratio = "–" if all_theirs is None else f"{all_theirs / sum(ours):.1f}x"
    return (f"| {row['name']} | `{row['rodla']}` | `{row['dogood']}` | {', '.join(rate(t) for t in theirs)} | "
            f"{', '.join(rate(o) for o in ours)} | {rate(None if all_theirs is None else all_theirs / 3)} | "
            f"{rate(sum(ours) / 3)} | {ratio} |")


if __name__ == "__main__":
    main()
