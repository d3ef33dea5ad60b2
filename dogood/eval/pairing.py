"""Which documents each OOD set is scored on: paired with the ID set by document, or unpaired.

An OOD set whose documents are all ID documents (shifted copies: same ids) is scored **paired** on the ID
documents it holds (a warning says how many it lacks; ``require_same_ids`` refuses instead). One that holds other
documents (all or some: FUNSD-R-style real-world sets, a FUNSD-layout folder of other forms) is scored
**unpaired**: ID over all its documents, the OOD set over all its own, each resampled over its own documents.
"""

from __future__ import annotations

from dataclasses import dataclass

from dogood.eval.datasets import EvalDataset, EvalError, refuse_copies


@dataclass
class Pairing:
    """How one OOD set is scored: its documents, whether unpaired, the ID documents it lacks and its own the ID
    set lacks."""

    docs: list[str]
    unpaired: bool
    id_only: int
    ood_only: int


def pair_sets(id_set: EvalDataset, ood_sets: list[EvalDataset], limit: int | None, require_same_ids: bool,
              warnings: list[str]) -> tuple[list[str], list[Pairing]]:
    """The ID documents scored (the first ``limit``) and each OOD set's :class:`Pairing`; the warnings of sets
    that differ go to ``warnings``."""
    all_id = id_set.source.ids()
    if not all_id:
        raise EvalError(f"dataset {id_set.name!r} has no documents in split {id_set.split!r}")
    id_ids = list(all_id[:limit] if limit else all_id)
    all_id_set = set(all_id)
    out = []
    for d in ood_sets:
        ood_ids = d.source.ids()
        ood_set = set(ood_ids)
        if require_same_ids and all_id_set != ood_set:
            raise EvalError(f"ID dataset {id_set.name!r} and OOD dataset {d.name!r} hold different documents: "
                            f"{len(all_id_set - ood_set)} id(s) only in {id_set.name!r}, {len(ood_set - all_id_set)} "
                            f"only in {d.name!r} (drop --require-same-ids to score the shared ones)")
        # what this run lost: ID documents it scores (the first --limit) that the OOD set lacks, and OOD documents
        # no ID document pairs with (those beyond --limit are left out on purpose, not lost)
        only_id = sum(1 for i in id_ids if i not in ood_set)
        only_ood = len(ood_set - all_id_set)
        refuse_copies(id_set, d, all_id_set, ood_set)
        if not ood_ids:
            raise EvalError(f"dataset {d.name!r} has no documents in split {d.split!r}")
        if only_ood:
            docs = list(ood_ids[:limit] if limit else ood_ids)
            shared = len(ood_set & all_id_set)
            warnings.append(f"{d.name} holds other documents than {id_set.name} ({only_ood} of its {len(ood_ids)} "
                            f"are not in {id_set.name}{f', {shared} are' if shared else ''}): scored unpaired, "
                            f"{id_set.name} on its {len(id_ids)} documents and {d.name} on its {len(docs)}, each "
                            "resampled over its own documents")
            out.append(Pairing(docs, True, only_id, only_ood))
            continue
        paired = [i for i in id_ids if i in ood_set]
        if not paired:
            raise EvalError(f"ID dataset {id_set.name!r} and OOD dataset {d.name!r} share no document among the "
                            f"first {len(id_ids)} ID documents (--limit): nothing to compare")
        if only_id:
            among = f" of the first {len(id_ids)}" if limit and len(id_ids) < len(all_id) else ""
            warnings.append(f"{d.name} and {id_set.name} hold different documents: scored on the {len(paired)} they "
                            f"share; {only_id} ID document(s){among} are not in {d.name}, {only_ood} of its documents "
                            f"are not in {id_set.name}")
        out.append(Pairing(paired, False, only_id, only_ood))
    return id_ids, out


def id_documents(id_ids: list[str], pairings: list[Pairing], whole: bool) -> list[str]:
    """The ID documents to predict: all of ``id_ids`` when some set is unpaired or ``whole`` (ablations), else
    those some OOD set pairs with."""
    if whole or any(p.unpaired for p in pairings):
        return id_ids
    needed = set().union(*(p.docs for p in pairings)) if pairings else set()
    return [i for i in id_ids if i in needed]


def training_overlap(model, ood: EvalDataset, docs: list[str]) -> str | None:
    """A warning when an OOD set holds documents the model was trained on (the ``train_ids`` a dogood baseline's
    file records): its score there is no out-of-distribution score."""
    meta = getattr(model, "meta", None)
    trained = meta.get("train_ids") if isinstance(meta, dict) else None
    if not isinstance(trained, list) or not trained:
        return None
    trained = {str(i) for i in trained}
    seen = [i for i in docs if i in trained]
    if not seen:
        return None
    return (f"{ood.name}: {len(seen)} of its {len(docs)} documents are documents model "
            f"{getattr(model, 'name', model)!r} was trained on (e.g. {seen[0]!r}): its score there is not "
            "out-of-distribution")
