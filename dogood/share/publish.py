"""Publish built datasets to the Hugging Face Hub, one version tag per release.

A publish manifest (``hub_upload/*.yaml``) says which recipe, and which of its
configs, goes to which Hub dataset repository::

    datasets:
      - repo: dogood-benchmarks/funsd-l   # Hub dataset repo id
        recipe: funsd-l                   # a recipe name or file
        configs: [merge, move]            # default: all
        version: 1.1.0                    # optional; must equal the recipe's
        private: false
        results: [../eval/baseline/report.json]   # optional: dogood eval reports for the card

:func:`push` validates every entry (recipes, versions, configs, results, the
token) before anything is uploaded; builds each recipe (or reuses a finished
build of the same recipe, version, seed, configs and dogood version, built in full:
no ``--limit``, no skipped documents; a build of the user's that does not qualify
is left alone and push builds into ``<build-dir>/.push/<recipe>``); renders
the card again for the repo; creates the repo; uploads the folder with
``huggingface_hub`` (``upload_folder``: files already on the Hub are not sent
again, so a re-run after an interruption uploads only what is missing); and
tags the commit ``vX.Y.Z``, so ``load_dataset(repo, config, revision="vX.Y.Z")``
gets exactly that build. A tag that already exists with other content is an
error; with the same content, nothing is uploaded.

The token is the standard one (``HF_TOKEN`` or ``huggingface-cli login``),
read by ``huggingface_hub`` itself: dogood never prints, logs or writes it.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from dogood.core import fs
from dogood.core.errors import DogoodError, RecipeError
from dogood.core.fs import check_no_links, partial_folder, remove_tree, seal_partial
from dogood.pipeline.safety import check_name, find_local, load_yaml, portable, read_build_info
from dogood.version import __version__

_REPO_ID = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
_SEMVER = re.compile(r"\A(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?\Z")
_KEYS = {"repo", "recipe", "configs", "version", "private", "results", "source"}


class PublishError(DogoodError):
    """A manifest, token or Hub state that stops a push before anything is uploaded."""


@dataclass
class PublishEntry:
    """One dataset of a manifest: a recipe (and configs) to a Hub repo."""

    repo: str
    recipe: Any  # dogood.pipeline.recipe.Recipe
    configs: list[str]
    private: bool = False
    results: list[dict[str, Any]] = field(default_factory=list)
    source: str | None = None

    @property
    def tag(self) -> str:
        return f"v{self.recipe.version}"


@dataclass
class PushResult:
    repo: str
    tag: str
    commit: str | None
    uploaded: bool  # False when the tag already held this content
    folder: Path


def load_manifest(path: str | Path) -> list[PublishEntry]:
    """Read and check a publish manifest; every error names the manifest and the entry."""
    from dogood.pipeline.recipe import load_recipe

    path = Path(path)
    try:
        data = load_yaml(fs.read_text(path, limit="recipe_bytes", what="publish manifest"))
    except FileNotFoundError:
        raise PublishError(f"publish manifest {path} not found") from None
    except fs.FileRefused as exc:
        raise PublishError(str(exc)) from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise PublishError(f"{path}: not valid YAML ({_short(exc)})") from None
    except OSError as exc:
        raise PublishError(f"publish manifest {path}: cannot read it ({exc.strerror or exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("datasets"), list) or not data["datasets"]:
        raise PublishError(f"{path}: expected a mapping with a non-empty list `datasets:`")
    entries, repos = [], set()
    for k, item in enumerate(data["datasets"]):
        where = f"{path}, dataset {k + 1}"
        if not isinstance(item, dict):
            raise PublishError(f"{where}: expected a mapping with `repo` and `recipe`")
        unknown = sorted(set(item) - _KEYS)
        if unknown:
            raise PublishError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_KEYS))}")
        repo = item.get("repo", "")
        if not isinstance(repo, str) or not _REPO_ID.match(repo):
            raise PublishError(f"{where}: `repo` must be a Hub id like owner/name, got {_short(repo)}")
        if repo in repos:
            raise PublishError(f"{where}: repo {repo} is listed twice")
        repos.add(repo)
        if "recipe" not in item:
            raise PublishError(f"{where}: no `recipe`")
        name = item["recipe"]
        if not isinstance(name, str) or not name:
            raise PublishError(f"{where}: `recipe` must be a recipe name or file, got {_short(name)}")
        local = path.parent / name
        try:
            recipe = load_recipe(str(local) if local.suffix in (".yaml", ".yml") and local.is_file() else name)
        except RecipeError as exc:
            raise PublishError(f"{where}: {exc}") from None
        try:
            check_name(recipe.name)
        except DogoodError as exc:
            raise PublishError(f"{where}: {exc}") from None
        if not _SEMVER.match(recipe.version):
            raise PublishError(f"{where}: recipe {recipe.name} has version {recipe.version!r}, not semver (1.2.3)")
        if "version" in item:
            version = str(item["version"])
            if not _SEMVER.match(version):
                raise PublishError(f"{where}: version {version!r} is not semver (like 1.2.3)")
            if version != recipe.version:
                raise PublishError(f"{where}: version {version} differs from recipe {recipe.name}'s {recipe.version}; "
                                   "the version lives in the recipe: change it there")
        configs = item.get("configs") or list(recipe.configs)
        if isinstance(configs, str):
            configs = [configs]
        if not isinstance(configs, list) or not all(isinstance(c, str) for c in configs):
            raise PublishError(f"{where}: `configs` must be a list of config names, got {_short(configs)}")
        configs = list(dict.fromkeys(configs))
        missing = [c for c in configs if c not in recipe.configs]
        if missing:
            raise PublishError(f"{where}: recipe {recipe.name} has no config {_short(', '.join(missing))}")
        results = []
        for report in item.get("results") or []:
            report_path = path.parent / report
            try:
                results.append(fs.read_json(report_path, what="eval report"))
            except (OSError, TypeError, fs.FileRefused) as exc:
                raise PublishError(f"{where}: cannot read eval report {report_path} "
                                   f"({getattr(exc, 'reason', exc)})") from None
        entries.append(PublishEntry(repo=repo, recipe=recipe, configs=list(configs), private=bool(item.get("private")),
                                    results=results, source=item.get("source")))
    return entries


def _short(value: Any, limit: int = 200) -> str:
    """``repr(value)`` cut to ``limit`` characters: an error message never prints a whole hostile manifest."""
    text = value if isinstance(value, str) and not isinstance(value, bool) else repr(value)
    text = str(text)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def reusable(folder: Path, entry: PublishEntry, source: str | None = None) -> bool:
    """Whether ``folder`` is a finished dogood build of exactly ``entry``: same recipe, version, seed, chains
    (the wanted configs and no others), box convention and dogood version, built in full (no ``--limit``,
    nothing skipped) from source files of the same content as the ones push would read."""
    from dogood.core.schema import DEFAULT_BOX_LEVEL
    from dogood.pipeline.safety import is_dogood_build

    if folder.is_symlink() or not folder.is_dir() or not is_dogood_build(folder):
        return False
    try:
        info = read_build_info(folder)
    except (OSError, fs.FileRefused):
        return False
    if not isinstance(info, dict):
        return False
    wanted = {c: entry.recipe.recorded_chain(c) for c in entry.configs}
    return (info.get("recipe") == entry.recipe.name and info.get("version") == entry.recipe.version
            and info.get("seed") == entry.recipe.seed and info.get("limit") is None
            and list(info.get("overrides") or []) == list(entry.recipe.overrides) and not info.get("skipped")
            and info.get("dogood_version") == __version__
            and json.loads(json.dumps(info.get("chains"))) == json.loads(json.dumps(wanted))
            and info.get("box_level") == (entry.recipe.box_level or DEFAULT_BOX_LEVEL.get(info.get("schema")))
            and isinstance(info.get("source_sha256"), dict)
            and all(info["source_sha256"].get(split, "-") == _content(entry, split, source)
                    for split in entry.recipe.splits)
            and _intact(folder))


def _intact(folder: Path) -> bool:
    """Whether a build's files are the ones it wrote (:func:`verify_build`) and it holds no link; said when not."""
    from dogood.core.progress import say

    try:
        check_no_links(folder, "build folder")
        verify_build(folder)
    except DogoodError as exc:
        say(f"not reusing {folder}: {exc}")
        return False
    return True


def _content(entry: PublishEntry, split: str, source: str | None) -> str | None:
    """The content hash of the files ``entry``'s build of ``split`` would read (``"?"`` when the source fails)."""
    from dogood.pipeline.safety import source_fingerprint
    from dogood.sources import open_source

    try:
        src = open_source(entry.recipe.source, split, source or entry.source)
        return source_fingerprint(src, src.ids())
    except DogoodError:
        return "?"


def ensure_build(entry: PublishEntry, build_dir: str | Path, *, source: str | None = None, num_proc: int = 1,
                 progress: bool = True) -> Path:
    """The built folder of ``entry``.

    ``build_dir/<recipe>`` is reused when it is a finished build of exactly this entry
    (:func:`reusable`), and built when it does not exist; an existing one is never replaced:
    the build then goes to push's own folder, ``build_dir/.push/<recipe>`` (reused on a re-run
    in the same way).
    """
    from dogood.pipeline.build import build

    check_name(entry.recipe.name)
    user = Path(build_dir) / entry.recipe.name
    if reusable(user, entry, source):
        return user
    if not user.exists() and not user.is_symlink():
        build(entry.recipe, user, source_path=source or entry.source, num_proc=num_proc, configs=entry.configs,
              overwrite=False, progress=progress)
        return user
    folder = Path(build_dir) / ".push" / entry.recipe.name
    if reusable(folder, entry, source):
        return folder
    build(entry.recipe, folder, source_path=source or entry.source, num_proc=num_proc, configs=entry.configs,
          overwrite=True, progress=progress)
    return folder


def stage(entry: PublishEntry, built: Path, dest: Path) -> Path:
    """Copy ``built`` to ``dest`` with the card rendered for the repo (load example, version, results).

    Before anything is copied, ``built`` must hold no symbolic link (its target would be published) and every
    file must have the sha256 its build recorded (a damaged or changed shard is refused, named). The copy is
    assembled in a hidden ``.<dest>.partial-<pid>`` folder (a killed run's is removed by the next) and renamed
    into place whole, each file checked against its sha256 as it is copied; every staged byte, Parquet cells
    included, is scanned for local paths, the home folder and the user name before the rename.
    """
    from dogood.pipeline.card import render_card_from_build
    from dogood.pipeline.safety import commit, is_dogood_build

    if dest.exists() or dest.is_symlink():
        if dest.is_symlink() or not dest.is_dir() or (any(dest.iterdir()) and not is_dogood_build(dest)):
            raise PublishError(f"{dest} exists and is not a dataset dogood staged; refusing to replace it: "
                               "move it away or pick another --dry-run folder")
    try:
        check_no_links(built, "the build folder")
    except DogoodError as exc:
        raise PublishError(f"{entry.repo}: {exc}; nothing was staged") from None
    recorded = verify_build(built)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = partial_folder(dest)
    try:
        for rel, digest in recorded.items():
            _copy_checked(built / rel, tmp / rel, digest)
        info = read_build_info(built)
        info["source"] = portable(info.get("source"))  # a build of dogood < 2.1 may name local files
        (tmp / "dogood_build.json").write_text(json.dumps(info, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        card = render_card_from_build(tmp, repo_id=entry.repo, results=entry.results)
        (tmp / "README.md").write_text(card, encoding="utf-8")
        seal_partial(tmp)
        found = find_local(tmp, extra=[built])
        if found is not None:
            path, where, hit = found
            raise PublishError(f"{entry.repo}: {path.relative_to(tmp).as_posix()} ({where}) would publish {hit!r}, "
                               "a path or name of this machine; nothing was staged for upload")
        commit(tmp, dest)
    except BaseException:
        remove_tree(tmp)
        raise
    return dest


def verify_build(built: Path) -> dict[str, str]:
    """The sha256 of each file of a built folder as its build recorded them (``dogood_build.json``'s ``sha256``),
    checked against the files; a :class:`PublishError` naming the first file that is missing, extra or changed
    (:func:`dogood.pipeline.safety.verify_recorded`)."""
    from dogood.pipeline.safety import verify_recorded

    return verify_recorded(built, PublishError)


def _copy_checked(src: Path, dst: Path, digest: str) -> None:
    """Copy one file, hashing what is read; a copy whose bytes differ from ``digest`` is refused, named."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    h = hashlib.sha256()
    with fs.open_file(src, max_bytes=1 << 62, what="built file") as fin, open(dst, "xb") as fout:
        while chunk := fin.read(1 << 20):
            h.update(chunk)
            fout.write(chunk)
    if h.hexdigest() != digest:
        raise PublishError(f"{src} changed while it was staged (its sha256 is not the one its build recorded)")


def check_token(api) -> str:
    """The user the standard Hugging Face token belongs to; a :class:`PublishError` when it is missing or invalid.

    The token itself never appears in a message.
    """
    from huggingface_hub import get_token
    from requests import HTTPError  # whoami raises it (HfHubHTTPError is a subclass)

    if not get_token():
        raise PublishError("no Hugging Face token: run `huggingface-cli login` or set HF_TOKEN "
                           "(a write token of the account or organisation that owns the repos)")
    try:
        who = api.whoami()
    except HTTPError as exc:
        status = getattr(exc.response, "status_code", None)
        raise PublishError(f"the Hugging Face token was refused (HTTP {status}): log in again with "
                           "`huggingface-cli login` or set a valid HF_TOKEN") from None
    return str(who.get("name", "?"))


def local_oids(folder: Path) -> dict[str, tuple[str, str]]:
    """For each file below ``folder``: (sha256, git blob sha1), the ids the Hub gives LFS and regular files."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            sha256, blob = hashlib.sha256(), hashlib.sha1(b"blob %d\0" % p.stat().st_size)
            with fs.open_file(p, max_bytes=1 << 62) as fh:  # shards can be large: one pass feeds both digests
                while chunk := fh.read(1 << 20):
                    sha256.update(chunk)
                    blob.update(chunk)
            out[p.relative_to(folder).as_posix()] = (sha256.hexdigest(), blob.hexdigest())
    return out


def remote_oids(api, repo: str, revision: str) -> dict[str, str]:
    """path -> sha256 (LFS files) or git blob id (regular files) at ``revision``."""
    from huggingface_hub.hf_api import RepoFile

    out = {}
    for item in api.list_repo_tree(repo, revision=revision, recursive=True, repo_type="dataset"):
        if isinstance(item, RepoFile):
            out[item.path] = item.lfs.sha256 if item.lfs else item.blob_id
    return out


def same_content(local: dict[str, tuple[str, str]], remote: dict[str, str]) -> bool:
    """True when the remote files are exactly the local ones (``.gitattributes`` aside)."""
    remote = {k: v for k, v in remote.items() if k != ".gitattributes"}
    return set(local) == set(remote) and all(remote[p] in local[p] for p in local)


def select(entries: list[PublishEntry], include: list[str] | None = None, exclude: list[str] | None = None,
           overrides: list[str] | None = None) -> list[PublishEntry]:
    """``entries`` narrowed and changed as ``dogood build`` does: ``include``/``exclude`` are config names, globs or
    comma lists (:meth:`~dogood.pipeline.recipe.Recipe.select_configs`), applied to each entry's configs; ``overrides`` are
    ``CONFIG.PARAM=VALUE`` items (:meth:`~dogood.pipeline.recipe.Recipe.with_overrides`), each applied to the entries that
    have a config matching ``CONFIG``. An entry left with no config is dropped. A pattern or an override that
    matches no config of any entry is an error naming it."""
    import fnmatch

    def patterns(values: list[str] | None) -> list[str]:
        return [p.strip() for v in values or [] for p in v.split(",") if p.strip()]

    wanted, unwanted = patterns(include), patterns(exclude)
    for pattern in wanted + unwanted:
        if not any(fnmatch.filter(e.configs, pattern) for e in entries):
            have = ", ".join(f"{e.recipe.name}: {', '.join(e.configs)}" for e in entries)
            raise PublishError(f"no config of the manifest matches {pattern!r} ({have})")
    out = []
    for entry in entries:
        configs = [c for c in entry.configs if (not wanted or any(fnmatch.fnmatch(c, p) for p in wanted))
                   and not any(fnmatch.fnmatch(c, p) for p in unwanted)]
        if configs:
            out.append(replace(entry, configs=configs))
    if not out:
        raise PublishError("--config/--exclude-config leave no config to push")
    used = set()
    for k, entry in enumerate(out):
        mine = [item for item in overrides or []
                if fnmatch.filter(entry.configs, item.partition("=")[0].rpartition(".")[0])]
        if mine:
            try:
                out[k] = replace(entry, recipe=entry.recipe.with_overrides(mine))
            except RecipeError as exc:
                raise PublishError(f"{entry.repo}: {exc}") from None
            used.update(mine)
    for item in overrides or []:
        if item not in used:
            if "=" not in item or "." not in item.partition("=")[0]:
                raise PublishError(f"--set {item!r}: expected CONFIG.PARAM=VALUE, e.g. bert_attack.model=/models/bert")
            pattern = item.partition("=")[0].rpartition(".")[0]
            raise PublishError(f"--set {item!r}: no config to push matches {pattern!r}")
    return out


def push(manifest: str | Path, *, build_dir: str | Path = "out", dry_run: str | Path | None = None,
         source: str | None = None, num_proc: int = 1, progress: bool = True, api=None,
         configs: list[str] | None = None, exclude_configs: list[str] | None = None,
         overrides: list[str] | None = None) -> list[PushResult]:
    """Build (or reuse), stage and publish every dataset of ``manifest``; see the module docstring.

    Everything that can stop a push is checked for every dataset before the
    first upload: the manifest, the token, and existing version tags (a tag
    that holds other content). With ``dry_run``, each dataset is staged into
    ``dry_run/<owner>__<name>`` exactly as it would be uploaded and nothing is
    sent (no token needed). ``configs``, ``exclude_configs`` and ``overrides`` narrow and change the manifest's
    datasets as ``dogood build``'s ``--config``, ``--exclude-config`` and ``--set`` do (:func:`select`).
    """
    from huggingface_hub import HfApi

    entries = load_manifest(manifest)
    if configs or exclude_configs or overrides:
        entries = select(entries, configs, exclude_configs, overrides)
    if dry_run is not None:
        out = []
        for entry in entries:
            built = ensure_build(entry, build_dir, source=source, num_proc=num_proc, progress=progress)
            staged = stage(entry, built, Path(dry_run) / entry.repo.replace("/", "__"))
            out.append(PushResult(entry.repo, entry.tag, None, False, staged))
        return out
    api = api or HfApi()
    check_token(api)
    # staged in a marked temporary folder of this process: a killed push's is removed by the next push
    tmp = partial_folder(Path(tempfile.gettempdir()) / "dogood-push")
    try:
        staged = {}
        for k, entry in enumerate(entries):
            built = ensure_build(entry, build_dir, source=source, num_proc=num_proc, progress=progress)
            staged[entry.repo] = stage(entry, built, Path(tmp) / str(k))
        published = {entry.repo: _tag_state(api, entry, staged[entry.repo]) for entry in entries}
        results = []
        for entry in entries:
            if published[entry.repo]:
                results.append(PushResult(entry.repo, entry.tag, None, False, staged[entry.repo]))
            else:
                results.append(_upload(api, entry, staged[entry.repo]))
        return results
    finally:
        remove_tree(tmp)


def _tag_state(api, entry: PublishEntry, staged: Path) -> bool:
    """True when the version tag exists with exactly the staged content; raises when it holds other content."""
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        refs = api.list_repo_refs(entry.repo, repo_type="dataset")
    except RepositoryNotFoundError:
        return False
    if not any(t.name == entry.tag for t in refs.tags):
        return False
    if same_content(local_oids(staged), remote_oids(api, entry.repo, entry.tag)):
        return True
    raise PublishError(f"{entry.repo} already has tag {entry.tag} with different content; nothing was uploaded. "
                       f"Bump the version of recipe {entry.recipe.name} to publish a new release")


def _upload(api, entry: PublishEntry, staged: Path) -> PushResult:
    verify_build(staged)  # what is sent is what the build wrote, checked again just before it leaves
    api.create_repo(entry.repo, repo_type="dataset", private=entry.private, exist_ok=True)
    commit = api.upload_folder(
        folder_path=str(staged),
        repo_id=entry.repo,
        repo_type="dataset",
        commit_message=f"{entry.recipe.name} {entry.tag} (dogood {__version__})",
        delete_patterns=["data/**", "previews/**"],
    )
    api.create_tag(entry.repo, tag=entry.tag, revision=commit.oid, repo_type="dataset",
                   tag_message=f"{entry.recipe.name} {entry.tag}")
    return PushResult(entry.repo, entry.tag, commit.oid, True, staged)
