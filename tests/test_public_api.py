"""The public API: ``import dogood`` gives build, recipes, shifts, eval and the record, lazily; each shift class
shows its declared parameters in ``inspect.signature`` and ``help()``; each shift declares the counts it reports."""

from __future__ import annotations

import inspect
import json
import pydoc
import subprocess
import sys

import numpy as np
import pytest

import dogood
from dogood.shifts.base import Outcome
from dogood.shifts.describe import describe_shift, shipped_shifts

PUBLIC = ["build", "load_recipe", "list_recipes", "Recipe", "BuildReport", "make_shift", "SHIFTS", "Shift",
          "Outcome", "SkipDocument", "evaluate", "compare", "load_model", "train_baseline", "EvalReport",
          "Prediction", "read_documents", "Document", "Word", "Entity", "QAPair", "PageImage", "ShiftRecord",
          "Compose", "OneOf", "Step", "Transform", "transform"]


def test_every_public_name_is_importable_from_dogood_and_documented():
    for name in PUBLIC:
        value = getattr(dogood, name)
        assert name in dogood.__all__, name
        if callable(value):
            assert inspect.getdoc(value), f"dogood.{name} has no docstring"
    assert dogood.SHIFTS["merge"] is dogood.make_shift("merge").__class__


def test_import_dogood_is_light():
    code = ("import sys, dogood; heavy = [m for m in ('datasets', 'torch', 'pyarrow', 'dogood.shifts', "
            "'dogood.pipeline', 'dogood.eval', 'transformers') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_make_shift_takes_a_name_and_parameters_or_a_recipe_entry():
    a = dogood.make_shift("merge", lambda_x=20, level="entity")
    b = dogood.make_shift({"shift": "merge", "lambda_x": 20, "level": "entity"})
    assert a.params() == b.params() == {"lambda_x": 20, "lambda_y": 5, "level": "entity", "until_stable": True,
                                        "rule": "dogood", "units": "pixels"}
    with pytest.raises(dogood.core.errors.RecipeError, match="has no parameter lambda_z"):
        dogood.make_shift("merge", lambda_z=1)


def test_load_recipe_takes_a_name_a_path_a_mapping_or_a_recipe(tmp_path):
    named = dogood.load_recipe("funsd-l")
    assert dogood.load_recipe(named) is named
    assert dogood.load_recipe(named.path).configs == named.configs
    made = dogood.load_recipe({"name": "mine", "version": "1.0.0", "source": {"kind": "funsd"},
                               "configs": {"m": [{"shift": "merge"}]}})
    assert made.name == "mine" and list(made.configs) == ["m"]


@pytest.mark.parametrize("cls", shipped_shifts(), ids=lambda c: c.name)
def test_signature_and_help_list_the_declared_parameters(cls):
    sig = inspect.signature(cls)
    fields = cls.Params.model_fields
    assert list(sig.parameters) == list(fields)
    for name, p in sig.parameters.items():
        assert p.default == fields[name].get_default(call_default_factory=True), name
        assert p.annotation is not inspect.Parameter.empty and "Annotated" not in str(p.annotation), name
    # the signature is the constructor's: building the shift from it gives the defaults
    assert cls(**{n: p.default for n, p in sig.parameters.items()}).params() == cls().params()
    text = pydoc.render_doc(cls, renderer=pydoc.plaintext)
    if sig.parameters:  # pydoc prints no empty signature
        assert f"{cls.__name__}({str(sig)[1:]}" in text.replace("\n |  ", "")
    assert "Parameters\n |  ----------" in text
    for row in cls.describe():
        assert f" |  {row['name']} : {row['type']}" in text, row["name"]
        assert row["description"] in " ".join(text.split()), row["name"]
    # an instance is called as shift(doc, seed): it has no parameter signature of its own
    assert list(inspect.signature(cls()).parameters) == ["doc", "seed"]


def _reported(cls, docs) -> set[str]:
    shift = cls()
    shift.prepare()
    keys: set[str] = set()
    for k, doc in enumerate(docs):
        out = shift.apply(doc, np.random.default_rng(k))
        if isinstance(out, Outcome):
            keys |= set(out.counts)
        elif isinstance(out, tuple):
            keys |= set(out[1])
    return keys


@pytest.fixture(scope="module")
def funsd_docs(funsd_dir):
    return dogood.read_documents("funsd", source_path=funsd_dir, limit=4)


@pytest.mark.parametrize("cls", [c for c in shipped_shifts() if c.name not in ("bert_attack", "move")],
                         ids=lambda c: c.name)
def test_each_shift_reports_only_the_counts_it_declares(cls, funsd_docs):
    """Run on four FUNSD test forms, a shift reports no count it does not declare, and `describe` lists exactly the
    declared ones, each with its meaning (bert_attack needs a masked LM, move its trained scorer: their counts are
    checked in their own tests)."""
    reported = _reported(cls, funsd_docs)
    assert reported <= set(cls.reported_counts), sorted(reported - set(cls.reported_counts))
    if cls.name not in ("merge",):
        assert reported, cls.name
    text = describe_shift(cls.name)
    counts = text.split("Counts (")[1].split("\n\n")[0].splitlines()[1:]
    assert [line.split(":")[0].strip() for line in counts] == (list(cls.reported_counts) or ["none"])
    for key in cls.reported_counts:
        assert cls.counts_help.get(key), f"{cls.name}: count {key!r} has no meaning in counts_help"


def test_describe_lists_far_fewer_counts_than_the_base_knows():
    base = len(dogood.Shift.counts_help)
    for cls in shipped_shifts():
        assert len(cls.reported_counts) < base / 2, cls.name


def test_read_documents_reads_a_source_and_a_built_folder(funsd_dir, tmp_path):
    docs = dogood.read_documents("funsd", source_path=funsd_dir, limit=3)
    assert [d.id for d in docs] == sorted(d.id for d in docs) and len(docs) == 3 and docs[0].words
    dogood.build("funsd-l", tmp_path / "l", source_path=funsd_dir, configs=["merge"], limit=3, progress=False)
    built = dogood.read_documents(f"{tmp_path / 'l'}:merge")
    assert [d.id for d in built] == [d.id for d in docs]
    assert [w.text for w in built[0].words] == [w.text for w in docs[0].words]
    assert built[0].provenance[-1].shift == "merge"
    assert json.loads((tmp_path / "l" / "dogood_build.json").read_text())["recipe"] == "funsd-l"


def test_every_import_path_the_docs_show_resolves_without_a_deprecation():
    """The README, the docs pages and the examples: each ``from dogood... import ...``, ``import dogood...``,
    ``::: dogood...`` (API pages) and backquoted ``dogood.<module>...`` names something that exists, at its
    current path unless it names an old path of a moved module as such (issue 36: ``dogood.errors`` and
    ``dogood.schema`` had moved with no note)."""
    import importlib
    import re
    import warnings
    from pathlib import Path

    from dogood.core.aliases import MOVED

    root = Path(__file__).resolve().parents[1]
    package = root / "dogood"
    modules = {p.stem for p in package.glob("*.py")} | {p.name for p in package.iterdir() if p.is_dir()}
    modules |= {old.split(".")[1] for old in MOVED} | set(dogood.__all__)
    files = [root / "README.md", *sorted((root / "docs").rglob("*.md")), *sorted((root / "examples").rglob("*.py")),
             *sorted((root / "examples").rglob("*.md"))]
    refs: set[tuple[str, str]] = set()
    for f in files:
        text = f.read_text(encoding="utf-8")
        for m in re.finditer(r"^\s*from (dogood(?:\.\w+)*) import \(?([\w, \n]+)\)?", text, re.M):
            refs |= {(f.name, f"{m.group(1)}.{name}") for name in re.findall(r"\w+", m.group(2)) if name != "as"}
        refs |= {(f.name, m.group(1)) for m in re.finditer(r"^\s*import (dogood(?:\.\w+)*)", text, re.M)}
        refs |= {(f.name, m.group(1)) for m in re.finditer(r"^::: (dogood(?:\.\w+)+)", text, re.M)}
        refs |= {(f.name, m.group(1)) for m in re.finditer(r"`(dogood(?:\.\w+)+)", text)
                 if m.group(1).split(".")[1] in modules}
    assert len(refs) > 30

    def resolve(dotted: str):
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            for part in parts[i:]:
                obj = getattr(obj, part)
            return obj

    from dogood.core.aliases import new_name

    bad = []
    for where, dotted in sorted(refs):
        old = new_name(dotted) is not None  # an old path the docs name as such (it imports, with its warning)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore" if old else "error", DeprecationWarning)
                resolve(dotted)
        except Exception as exc:  # noqa: BLE001 - any failure is a broken reference
            bad.append(f"{where}: {dotted} ({type(exc).__name__}: {exc})")
    assert not bad, "\n".join(bad)
