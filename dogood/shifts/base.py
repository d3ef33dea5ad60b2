"""What every shift is: a small class with named parameters and a seeded ``apply``."""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple

import numpy as np
from pydantic import ValidationError

from dogood.core.document import Document, ShiftRecord
from dogood.core.errors import RecipeError
from dogood.core.fs import recorded_value
from dogood.core.papers import Cites
from dogood.core.seeds import step_key
from dogood.measures.cues import check_cues
from dogood.measures.factors import check_factors
from dogood.shifts import params as declared

SHIFTS: dict[str, type[Shift]] = {}


class SkipDocument(Exception):
    """Raised by :meth:`Shift.apply` when the shift cannot act on a document.

    The document passes through unchanged; the reason is recorded in its
    provenance and counted in the data card.
    """


class Outcome(NamedTuple):
    """What :meth:`Shift.apply` may return instead of a bare document: the document, what the shift did
    (``counts``, e.g. ``{"changed": 9, "eligible": 90}``) and per-document values it used (``tallies``,
    e.g. ``{"photo": {"397133": 1}}``). Both are kept in the provenance and summed per config in the card."""

    doc: Document
    counts: Mapping[str, int] = {}
    tallies: Mapping[str, Mapping[str, int]] = {}


#: The tally of a text shift that redraws its words (``render: true``; :class:`dogood.page.render.Redraw`).
KEPT_HELP = ("with render: true, words passed over because they cannot be redrawn as the page printed them, by why: "
             "handwriting, unmatched (print no face matches), vertical, background (a screened or dark ground), glyph "
             "(characters the fonts lack), faint (no ink), too long (wider than its box at its print's size, squeezed 5% at most)")


class Shift:
    """Base class of all shifts.

    A subclass sets ``name`` (the key recipes use), ``family`` (``image``,
    ``text`` or ``layout``), declares its parameters once in a nested
    ``Params`` model (:mod:`dogood.shifts.params`: type, range, default,
    description), and implements :meth:`apply`. The constructor validates
    keyword (or positional, in declaration order) arguments against
    ``Params``, stores each under its own name and calls :meth:`setup`.

    The contract: :meth:`apply` takes a document and a
    ``numpy.random.Generator`` and returns a new document (or an
    :class:`Outcome`); it draws randomness only from that generator, never
    reads files, never writes output, and never imports another shift, the
    recipe layer, the pipeline or eval. What a shift needs from disk (a
    lexicon, photos, a model, Tesseract) it loads in :meth:`prepare`, which
    the build calls once per process before any document, naming the config
    when it fails. :meth:`setup` only derives state from the parameters.
    """

    name: ClassVar[str] = ""
    family: ClassVar[str] = ""
    #: The declared parameters (a :class:`dogood.shifts.params.Params` model).
    Params: ClassVar[type[declared.Params]] = declared.Params
    #: The papers the shift comes from (:mod:`dogood.core.papers`), with the section and, where it follows only the
    #: paper's idea, how it differs.
    papers: ClassVar[tuple[Cites, ...]] = ()
    #: The shortest page side, in pixels, the shift can act on; a smaller page (a row may hold a 1x1 page) passes
    #: through unchanged, recorded as skipped.
    min_side: ClassVar[int] = 1
    #: Whether the shift re-reads the words from the shifted page (OCR), so the card says where words come from.
    reads_words: ClassVar[bool] = False
    #: What the shift's output means under each convention of the ``bboxes`` column
    #: (:data:`dogood.core.schema.BOX_LEVELS`): ``word`` gives each token its own box,
    #: ``segment`` its entity's box, derived after the chain from the shifted words.
    #: A convention missing here cannot be used with the shift (the build says so).
    box_levels: ClassVar[dict[str, str]] = {
        "word": "each token keeps the box the shift leaves it",
        "segment": "each token gets the union of its entity's shifted word boxes",
    }

    #: The factors (:data:`dogood.measures.factors.FACTORS`) the shift may change: every build measures all of
    #: them per config and warns of a change no step of the config declares. Parameters may add some
    #: (:meth:`declared_factors`).
    factors: ClassVar[frozenset[str]] = frozenset()
    #: What ``render: true`` adds, for shifts with a ``render`` parameter: redrawing or erasing words changes the
    #: pixels inside their boxes.
    render_factors: ClassVar[frozenset[str]] = frozenset({"ink"})
    #: Lines ``dogood describe`` adds on how other parameters change the declaration (:meth:`declared_factors`).
    factor_notes: ClassVar[tuple[str, ...]] = ()
    #: The cue tests (:data:`dogood.measures.cues.CUES`, by name) a build runs on every config the shift is in: each
    #: tells apart two kinds of sample that a shift leaving no cue keeps alike (``background``: background near
    #: the text and far from it), as a classifier's AUROC in the card. :attr:`render_cues`: what ``render: true``
    #: adds (:meth:`declared_cues`).
    cues: ClassVar[frozenset[str]] = frozenset()
    render_cues: ClassVar[frozenset[str]] = frozenset()
    #: What the cue tests gave on a reference build, for ``dogood describe``: cue -> (where it was measured,
    #: {level, or 0 for the defaults: AUROC}).
    cue_figures: ClassVar[dict[str, tuple[str, dict[int, float]]]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        try:
            cls.factors = check_factors(cls.factors, f"shift {cls.__name__}: ")
            cls.render_factors = check_factors(cls.render_factors, f"shift {cls.__name__}: ")
            cls.cues = check_cues(cls.cues, f"shift {cls.__name__}: ")
            cls.render_cues = check_cues(cls.render_cues, f"shift {cls.__name__}: ")
        except (TypeError, ValueError) as exc:
            raise TypeError(str(exc)) from None
        if "__init__" in cls.__dict__:
            raise TypeError(f"shift {cls.__name__} defines __init__: declare its parameters in a nested Params "
                            "model instead (dogood.shifts.params) and derive state in setup()")
        if cls.name:
            if cls.name in SHIFTS and SHIFTS[cls.name] is not cls:
                raise TypeError(f"two shifts named {cls.name!r}: {SHIFTS[cls.name].__name__} and {cls.__name__}")
            SHIFTS[cls.name] = cls
        if "Params" in cls.__dict__ or "__signature__" not in cls.__dict__:
            cls.__signature__ = _ClassSignature(cls)
            if cls.name and cls.__doc__ and "\nParameters\n" not in cls.__doc__:
                cls.__doc__ = inspect.cleandoc(cls.__doc__) + "\n\n" + parameters_section(cls)

    def __init__(self, *args: Any, **kwargs: Any):
        names = list(type(self).Params.model_fields)
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__} takes at most {len(names)} positional parameters ({', '.join(names)})")
        for name, value in zip(names, args):
            if name in kwargs:
                raise TypeError(f"{type(self).__name__} got two values for parameter {name}")
            kwargs[name] = value
        try:
            values = type(self).Params(**kwargs)
        except ValidationError as exc:
            raise ValueError(declared.problem(type(self).Params, exc.errors()[0], kwargs)) from None
        for name in names:
            setattr(self, name, getattr(values, name))
        self.setup()

    def __getstate__(self) -> dict[str, Any]:
        """A shift pickles as its parameters only: what :meth:`prepare` loaded (a model, vectors) never travels
        to another process (a Ray actor calls :meth:`prepare` itself); :meth:`setup` runs again on unpickling."""
        return {name: getattr(self, name) for name in type(self).Params.model_fields}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.setup()

    def setup(self) -> None:
        """Derive state from the parameters (cheap, no files); raise ``ValueError`` for combinations that make no sense."""

    def apply(self, doc: Document, rng: np.random.Generator) -> Document | Outcome | tuple[Document, dict[str, int]]:
        """The shifted document, or an :class:`Outcome` that also says what the shift did: kept in the provenance
        and summed per config in the data card. (A ``(document, counts)`` tuple is read as an outcome without
        tallies.)"""
        raise NotImplementedError

    def declared_factors(self) -> frozenset[str]:
        """The factors this step may change with its parameters: :attr:`factors`, and :attr:`render_factors` when a
        ``render`` parameter is on. A shift whose factors depend on other parameters overrides this."""
        out = set(self.factors)
        if getattr(self, "render", False):
            out |= self.render_factors
        return frozenset(out)

    def declared_cues(self) -> frozenset[str]:
        """The cue tests a build runs on this step's configs: :attr:`cues`, and :attr:`render_cues` when a ``render``
        parameter is on."""
        return frozenset(self.cues | (self.render_cues if getattr(self, "render", False) else frozenset()))

    def prepare(self) -> None:
        """Load what the shift needs once per process (a lexicon, photos, a model); the build calls it before any
        document and reports a failure with the config's name."""

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """Each parameter's default, as a recipe would write it (tuples as lists)."""
        return {name: _plain(field.get_default(call_default_factory=True))
                for name, field in cls.Params.model_fields.items()}

    @classmethod
    def describe(cls) -> list[dict[str, str]]:
        """One row per parameter: ``name``, ``type``, ``default``, ``range``, ``description``, ``aliases`` (old
        names)."""
        rows = []
        for name, field in cls.Params.model_fields.items():
            rows.append({
                "name": name,
                "type": declared.expected(field),
                "default": _shown(field.get_default(call_default_factory=True)),
                "range": declared.value_range(field),
                "description": field.description or "",
                "aliases": ", ".join(a for a in declared.alias_names(field) if a != name),
            })
        return rows

    def card_notes(self, schema: str = "funsd") -> list[str]:
        """Lines the data card adds under the shift's config (e.g. which model a shift used); none by default.

        ``schema`` is the output's (``funsd``, ``rvl_cdip``, ``docvqa``), so a note only states what applies.
        """
        return []

    def credits(self, tallies: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
        """Credits owed for third-party material the shift used, from its tallies over a build (e.g. the photo
        tallies of ``natural_background``): dicts with ``id``, ``title``, ``url``, ``license``, ``license_url``,
        ``share_alike`` and ``source_dataset`` (the Hub's ``source_datasets`` tag of where it came from). None by
        default."""
        return []

    #: What each count (``apply``'s counts, summed in the card) means; a shift adds or overrides its own.
    counts_help: ClassVar[dict[str, str]] = {
        "eligible": "words (or entities) the shift may act on",
        "changed": "words (or entities) the shift changed",
        "unchangeable": "eligible items for which the shift found no change to make",
        "clipped": "boxes that reached past the page edge and were brought back inside it",
        "dropped": "words removed",
        "deleted": "words removed",
        "added": "words inserted",
        "neighbours": "words in the neighbour zones of values",
        "pairs": "key-value pairs that traded places",
        "protected": "background words left alone because they belong to a value or key",
        "samples": "text samples (an entity's words, or a line of loose words) with eligible words",
        "perturbed_samples": "samples in which words were changed",
        "perturbations": "edits made",
        "short": "edits asked of a sample that it had too few eligible words for",
        "too_long": "words longer than the word-length cap, never changed",
        "words": "words on the pages",
        "no_ink": "words whose box held no ink",
        "number": "words of drawn samples left alone because they hold a digit",
        "symbol": "words of drawn samples left alone because they hold a symbol other than a letter",
        "empty": "words of drawn samples left alone because they hold no letter",
        "non_latin": "words of drawn samples left alone because they hold a letter outside the Latin script",
        "moved": "words (or entities) moved",
        **{f"margin_{side}": f"pixels of white margin added on the {side}" for side in ("left", "right", "top")},
        "margin_bottom": "pixels of white margin added at the bottom",
        **{f"changed_{kind}": f"values replaced by a generated {kind.replace('_', ' ')}"
           for kind in ("date", "money", "number", "digits", "other", "company", "address", "city", "name")},
    }

    #: The counts :meth:`apply` reports (keys of :attr:`counts_help`), declared per shift: ``dogood describe`` and
    #: the docs list these and no others (a test runs each shift on FUNSD forms and checks what it reports).
    reported_counts: ClassVar[tuple[str, ...]] = ()

    #: What the shift needs beyond dogood's own dependencies, checked by ``dogood plan`` before a build:
    #: ``module:NAME[EXTRA]`` (a Python package of a dogood extra), ``nltk:NAME`` (NLTK data), ``pos:tagger`` (the part-of-speech
    #: tagger's model, the ``pos`` extra), ``tesseract`` (the
    #: program), ``coco`` (COCO annotations and photos), ``glove`` (GloVe vectors in the data folder),
    #: ``model:PARAM`` (the masked LM the parameter names), ``scorer:PARAM`` (the token model the parameter names).
    requires: ClassVar[tuple[str, ...]] = ()

    def requirements(self) -> tuple[str, ...]:
        """What this step needs (:attr:`requires`; a shift whose needs depend on its parameters overrides this)."""
        return self.requires

    #: What each tally (``apply``'s per-document values, e.g. ``{"photo": {"397133": 1}}``, summed in the card)
    #: means; a shift with tallies adds its own.
    tallies_help: ClassVar[dict[str, str]] = {}

    #: Severity levels 1-5 (ImageNet-C style): each level's parameter values, overriding the config's. A shift
    #: without levels cannot be swept by a recipe's ``severities:`` key.
    severities: ClassVar[dict[int, dict[str, Any]]] = {}

    #: The parameters naming entity labels the shift cannot act without (key_drop's ``labels``: the keys); a
    #: FUNSD-style build whose data lacks one refuses the config at plan time (:meth:`needs_labels`).
    label_params: ClassVar[tuple[str, ...]] = ()

    def needs_labels(self) -> tuple[str, ...]:
        """The entity labels this step acts on and needs in the data: the values of :attr:`label_params`."""
        out: list[str] = []
        for name in self.label_params:
            out += [label for label in getattr(self, name) or () if label not in out]
        return tuple(out)

    def check_box_level(self, box_level: str) -> None:
        """Raise ``ValueError`` saying why this shift cannot be written under ``box_level``; pass otherwise."""
        if box_level not in self.box_levels:
            allowed = ", ".join(f"{k} ({v})" for k, v in self.box_levels.items())
            raise ValueError(f"shift {self.name!r} cannot be written with box_level {box_level!r}; it supports {allowed}")

    #: The content key this step's draws are seeded from when it is not its own (:meth:`seed_key`): a severity
    #: config's step (``merge@3``) draws what its config's own step draws, so the levels of one config share their
    #: draws (photo, warp shape, fold positions, noise pattern, words picked) and differ only in magnitude.
    draw_key: str | None = None

    def step_key(self) -> str:
        """This step's content (name and full parameters, less :attr:`later_params` at their old values) as
        canonical JSON."""
        return step_key(self.name, self.recorded_params())

    def seed_key(self) -> str:
        """What this step's seed is hashed from: :attr:`draw_key` when set (a severity level), else
        :meth:`step_key`."""
        return self.draw_key or self.step_key()

    #: Parameters added after configs using the shift were published, each with the value that keeps the old
    #: behaviour: :meth:`recorded_params` leaves such a parameter out while it has that value, so the seeds and
    #: provenance of existing configs (and so their bytes) stay what they were.
    later_params: ClassVar[dict[str, Any]] = {}

    #: The parameters that name files or folders (a COCO annotation file, a model folder): only these are ever
    #: read as paths (:meth:`params`); every other parameter is text, whatever it looks like (``texts:
    #: ["/usr/share"]`` is a word to draw, never a folder to hash).
    path_params: ClassVar[tuple[str, ...]] = ()

    def params(self) -> dict[str, Any]:
        """The parameters and their current values, as records show them (what the step's seed is hashed from):
        a path-valued one (:attr:`path_params`: a COCO annotation file, a model folder) as its last part and a
        content hash (:func:`dogood.core.fs.recorded_path`), so no folder of this machine reaches a card, a shard's
        provenance or a seed, and the same file gives the same rows wherever it lies."""
        paths = type(self).path_params
        return {name: recorded_value(_plain(getattr(self, name))) if name in paths else _plain(getattr(self, name))
                for name in type(self).Params.model_fields}

    def recorded_params(self) -> dict[str, Any]:
        """What the step's seed is hashed from and its provenance records: :meth:`params`, less any of
        :attr:`later_params` at its old-behaviour value."""
        later = type(self).later_params
        return {name: value for name, value in self.params().items() if not (name in later and value == later[name])}

    def __call__(self, doc: Document, seed: int) -> Document:
        """Apply with ``numpy.random.default_rng(seed)`` and append a :class:`ShiftRecord`."""
        counts: Mapping[str, int] = {}
        tallies: Mapping[str, Mapping[str, int]] = {}
        try:
            if min(doc.width, doc.height) < self.min_side:
                raise SkipDocument(f"the page is {doc.width}x{doc.height} pixels; {self.name} needs at least "
                                   f"{self.min_side} on each side")
            out = self.apply(doc, np.random.default_rng(seed))
            if isinstance(out, Outcome):
                out, counts, tallies = out
            elif isinstance(out, tuple):
                out, counts = out
            skipped = None
        except SkipDocument as why:
            out, skipped = doc, str(why) or "skipped"
        if doc.has_quads and not out.has_quads:  # quads asked for: words this shift rebuilt keep the flag
            out = out.with_quads()
        record = ShiftRecord(self.name, self.recorded_params(), int(seed), skipped, dict(counts),
                             {k: dict(v) for k, v in tallies.items()})
        return out.with_shift(record)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"


class _ClassSignature:
    """``inspect.signature(ShiftClass)``: the declared parameters, keyword or positional in declaration order, with
    their defaults and types (from ``Params``); an instance has no ``__signature__`` of its own (it is called as
    ``shift(doc, seed)``)."""

    def __init__(self, cls: type[Shift]):
        self.cls = cls
        self._signature: inspect.Signature | None = None

    def __get__(self, obj: Any, owner: type | None = None) -> inspect.Signature:
        if obj is not None:
            raise AttributeError("__signature__")
        if self._signature is None:
            self._signature = signature_of(self.cls)
        return self._signature


def signature_of(cls: type[Shift]) -> inspect.Signature:
    """The constructor signature declared by ``cls.Params``: one parameter per field, with its default and type."""
    params = []
    for name, field in cls.Params.model_fields.items():
        default = field.get_default(call_default_factory=True)
        params.append(inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default,
                                        annotation=_bare(field.annotation)))
    return inspect.Signature(params)


def _bare(annotation: Any) -> Any:
    """A parameter's type without pydantic's markers (``Annotated[int, Strict()] | float`` -> ``int | float``)."""
    import functools
    import operator
    import typing

    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is None:
        return inspect.Parameter.empty
    if origin is typing.Annotated:
        return _bare(args[0])
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return functools.reduce(operator.or_, [_bare(a) for a in args])
    if origin is tuple:
        return tuple[tuple(_bare(a) if a is not Ellipsis else a for a in args)]
    return annotation


def parameters_section(cls: type[Shift]) -> str:
    """A numpydoc ``Parameters`` section written from ``cls.Params`` (``help()``, the API docs)."""
    rows = cls.describe()
    if not rows:
        return "Parameters\n----------\nNone."
    lines = ["Parameters", "----------"]
    for r in rows:
        where = f", {r['range']}" if r["range"] else ""
        lines.append(f"{r['name']} : {r['type']}{where}, default {r['default']}")
        if r["description"]:
            lines.append(f"    {r['description']}")
    return "\n".join(lines)


def _shown(default: Any) -> str:
    """A parameter's default as a recipe writes it (``null``, ``false``, ``[1, 2]``; strings bare)."""
    return default if isinstance(default, str) and default else json.dumps(_plain(default), ensure_ascii=False)


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def recorded_step(spec: Any) -> Any:
    """A recipe's chain entry as records show it (``dogood_build.json``, a publish manifest): the values of the
    shift's :attr:`~Shift.path_params` as their last part and content hash, every other value as written."""
    cls = SHIFTS.get(spec.get("shift")) if isinstance(spec, dict) and isinstance(spec.get("shift"), str) else None
    if cls is None:
        return spec
    return {k: recorded_value(v) if k in cls.path_params else v for k, v in spec.items()}


def make_shift(spec: dict[str, Any]) -> Shift:
    """Instantiate a shift from a recipe entry ``{shift: NAME, param: value, ...}``."""
    if not isinstance(spec, dict) or "shift" not in spec:
        raise RecipeError(f"a chain entry must be a mapping with a 'shift' key, got {spec!r}")
    name = spec["shift"]
    cls = SHIFTS.get(name) if isinstance(name, str) else None
    if cls is None:
        raise RecipeError(f"unknown shift {name!r}; known shifts: {', '.join(sorted(SHIFTS)) or 'none'}")
    params = {k: v for k, v in spec.items() if k != "shift"}
    unknown = sorted(map(str, set(params) - set(declared.accepted_names(cls.Params))))
    if unknown:
        raise RecipeError(f"shift {name!r} has no parameter {', '.join(unknown)}; it takes "
                          f"{', '.join(cls.Params.model_fields) or 'none'}")
    try:
        return cls(**params)
    except (TypeError, ValueError) as exc:
        raise RecipeError(f"shift {name!r}: {exc}") from None
