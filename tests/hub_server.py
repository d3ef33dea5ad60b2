"""A small, writable, Hugging Face Hub compatible HTTP server for tests.

Standard library only. It speaks enough of the Hub's HTTP API for the real
``huggingface_hub`` client (``HfApi``, ``hf_hub_download``, ``HfFileSystem``)
and ``datasets.load_dataset`` to create a repository, commit regular and LFS
files, tag commits and read everything back (with HTTP range requests), with
``HF_ENDPOINT`` pointed at it and ``HF_HUB_DISABLE_XET=1``.

Usage::

    with HubServer() as hub, hub_environment(hub.url):
        api = HfApi(endpoint=hub.url, token="hf_test")
        api.create_repo("tester/ds", repo_type="dataset")
        ...
        hub.counts["lfs_put"]            # requests received, per kind
        hub.files("tester/ds", "v1.0.0")  # {path: bytes} at a revision

Request kinds (keys of ``counts``, names for ``fail_after``): ``whoami``,
``validate_yaml``, ``create_repo``, ``delete_repo``, ``repo_info``, ``refs``,
``tree``, ``paths_info``, ``commits``, ``preupload``, ``lfs_batch``,
``lfs_put``, ``commit``, ``tag_create``, ``tag_delete``, ``branch_create``,
``branch_delete``, ``resolve`` (GET), ``resolve_head`` (HEAD), ``unknown``.

What it does not do: pull requests (``create_pr``), Xet storage, multipart
LFS uploads, pagination, gated repositories, organisations' permissions (any
valid token may write to any namespace).
"""

from __future__ import annotations

import base64
import contextlib
import fnmatch
import hashlib
import json
import os
import secrets
import threading
import time
import traceback
import urllib.parse
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, Iterator, List, Optional, Tuple

__all__ = ["HubServer", "HubError", "hub_environment"]

REPO_TYPES = ("model", "dataset", "space")
# URL prefix of each repo type on the resolve / LFS routes ("" for models).
URL_PREFIX = {"model": "", "dataset": "datasets/", "space": "spaces/"}
API_PLURAL = {"models": "model", "datasets": "dataset", "spaces": "space"}

# Files at least this large always go to LFS (the Hub's threshold is 10 MB).
LFS_SIZE_THRESHOLD = 10 * 1024 * 1024

DEFAULT_GITATTRIBUTES = "".join(
    f"*.{ext} filter=lfs diff=lfs merge=lfs -text\n"
    for ext in (
        "arrow", "parquet", "png", "jpg", "jpeg", "webp", "tif", "tiff", "gif", "pdf",
        "bin", "npy", "npz", "pt", "pth", "safetensors", "onnx", "pkl",
        "zip", "gz", "tgz", "tar", "zst", "xz", "7z",
    )
)


def git_blob_sha1(data: bytes) -> str:
    """git's object id of a blob with this content."""
    h = hashlib.sha1()
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def lfs_pointer(oid: str, size: int) -> bytes:
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {size}\n".encode()


def _now() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % int((t % 1) * 1000)


class HubError(Exception):
    """An HTTP error answer: status, message, optional ``X-Error-Code`` and extra JSON fields."""

    def __init__(self, status: int, message: str, code: Optional[str] = None, **extra):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.extra = extra


# --------------------------------------------------------------------------- state


@dataclass(frozen=True)
class Entry:
    """A file in a commit: regular (``data``) or LFS (``lfs_oid``, content in the repo's LFS store)."""

    size: int
    git_oid: str
    data: Optional[bytes] = None
    lfs_oid: Optional[str] = None

    @property
    def is_lfs(self) -> bool:
        return self.lfs_oid is not None

    @property
    def pointer_size(self) -> int:
        return len(lfs_pointer(self.lfs_oid, self.size)) if self.lfs_oid else 0

    @property
    def remote_oid(self) -> str:
        """What ``preupload`` answers as ``oid`` (compared client-side with its local oid)."""
        return self.lfs_oid if self.lfs_oid else self.git_oid


@dataclass
class Commit:
    sha: str
    parent: Optional[str]
    files: Dict[str, Entry]
    title: str
    message: str
    date: str
    author: str


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    private: bool
    created_at: str
    commits: Dict[str, Commit] = field(default_factory=dict)
    branches: Dict[str, str] = field(default_factory=dict)
    tags: Dict[str, str] = field(default_factory=dict)
    lfs: Dict[str, bytes] = field(default_factory=dict)  # sha256 -> content
    upload_sigs: Dict[str, str] = field(default_factory=dict)  # signature -> oid

    def resolve(self, revision: str) -> Commit:
        rev = revision
        if rev.startswith("refs/heads/"):
            rev = rev[len("refs/heads/"):]
        elif rev.startswith("refs/tags/"):
            rev = rev[len("refs/tags/"):]
        sha = self.branches.get(rev) or self.tags.get(rev)
        if sha is None and rev in self.commits:
            sha = rev
        if sha is None:
            raise HubError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
        return self.commits[sha]

    def history(self, commit: Commit) -> Iterator[Commit]:
        c: Optional[Commit] = commit
        while c is not None:
            yield c
            c = self.commits.get(c.parent) if c.parent else None


def _dirs_of(files: Dict[str, Entry]) -> Dict[str, List[str]]:
    """Every folder (without the root "") -> sorted file paths below it."""
    out: Dict[str, List[str]] = {}
    for path in sorted(files):
        parts = path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            out.setdefault("/".join(parts[:i]), []).append(path)
    return out


def _folder_oid(files: Dict[str, Entry], folder: str) -> Optional[str]:
    prefix = folder + "/" if folder else ""
    below = [(p, e.git_oid) for p, e in sorted(files.items()) if p.startswith(prefix)]
    if not below:
        return None
    h = hashlib.sha1()
    for p, oid in below:
        h.update(f"{p}\0{oid}\n".encode())
    return h.hexdigest()


def _gitattributes_lfs_patterns(files: Dict[str, Entry], repo: "Repo") -> List[str]:
    entry = files.get(".gitattributes")
    if entry is None:
        return []
    data = entry.data if entry.data is not None else repo.lfs.get(entry.lfs_oid or "", b"")
    patterns = []
    for line in data.decode("utf-8", "replace").splitlines():
        parts = line.split()
        if len(parts) >= 2 and not parts[0].startswith("#") and "filter=lfs" in parts[1:]:
            patterns.append(parts[0])
    return patterns


def _matches_gitattributes(path: str, patterns: List[str]) -> bool:
    name = path.rsplit("/", 1)[-1]
    for pattern in patterns:
        if "/" in pattern:
            if fnmatch.fnmatchcase(path, pattern.lstrip("/")):
                return True
        elif fnmatch.fnmatchcase(name, pattern):
            return True
    return False


# --------------------------------------------------------------------------- server


class HubServer:
    """A Hub-compatible HTTP server on ``127.0.0.1`` (port 0: any free port), in a background thread.

    Args:
        tokens: valid tokens -> user name (default ``{"hf_test": "tester"}``).
        host, port: where to listen.
        read_requires_token: if True, reads need a valid token too (default: public reads).

    Attributes:
        url: base URL, e.g. ``http://127.0.0.1:40123`` (set once started).
        tokens: dict token -> user name; edit freely.
        counts: ``collections.Counter`` of requests received per kind (failed ones included).
        requests: log of ``(kind, method, path, status)`` for every request answered.
        errors: tracebacks of unexpected server-side exceptions (tests should expect none).
        repos: ``{(repo_type, repo_id): Repo}``, the raw state.
    """

    def __init__(
        self,
        tokens: Optional[Dict[str, str]] = None,
        host: str = "127.0.0.1",
        port: int = 0,
        read_requires_token: bool = False,
    ):
        self.tokens: Dict[str, str] = dict(tokens) if tokens is not None else {"hf_test": "tester"}
        self.host = host
        self.port = port
        self.read_requires_token = read_requires_token
        self.counts: Counter = Counter()
        self.requests: List[Tuple[str, str, str, int]] = []
        self.errors: List[str] = []
        self.repos: Dict[Tuple[str, str], Repo] = {}
        self.lock = threading.RLock()
        self._failures: Dict[str, dict] = {}
        self._salt = secrets.token_hex(8)  # commit ids differ between server instances
        self._commit_counter = 0
        self._httpd: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None
        self.url = ""

    # -- lifecycle

    def start(self) -> "HubServer":
        httpd = ThreadingHTTPServer((self.host, self.port), _Handler)
        httpd.daemon_threads = True
        httpd.hub = self  # type: ignore[attr-defined]
        self._httpd = httpd
        self.port = httpd.server_address[1]
        self.url = f"http://{self.host}:{self.port}"
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="hub-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "HubServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- test controls

    def fail_after(self, kind: str, n: int, status: int = 500, times: Optional[int] = None) -> None:
        """Let the next ``n`` requests of ``kind`` through, then answer ``status`` (request body read first).

        Counting starts now. ``times``: how many requests to fail (None: all, until ``clear_failures``).
        Note: huggingface_hub retries an LFS PUT answered 500/502/503/504 up to 5 times with
        back-off (about 23 s for a lasting failure); use e.g. ``status=507`` for an immediate failure.
        """
        with self.lock:
            self._failures[kind] = {"after": n, "status": status, "times": times, "seen": 0, "failed": 0}

    def clear_failures(self) -> None:
        with self.lock:
            self._failures.clear()

    def reset_counts(self) -> None:
        with self.lock:
            self.counts.clear()
            self.requests.clear()

    def _should_fail(self, kind: str) -> Optional[int]:
        with self.lock:
            rule = self._failures.get(kind)
            if rule is None:
                return None
            rule["seen"] += 1
            if rule["seen"] > rule["after"] and (rule["times"] is None or rule["failed"] < rule["times"]):
                rule["failed"] += 1
                return rule["status"]
            return None

    # -- state readers

    def repo(self, repo_id: str, repo_type: str = "dataset") -> Repo:
        with self.lock:
            try:
                return self.repos[(repo_type, repo_id)]
            except KeyError:
                raise KeyError(f"no {repo_type} repo {repo_id!r}") from None

    def resolve(self, repo_id: str, revision: str = "main", repo_type: str = "dataset") -> str:
        """Commit sha of a branch, tag or commit."""
        with self.lock:
            return self.repo(repo_id, repo_type).resolve(revision).sha

    def files(self, repo_id: str, revision: str = "main", repo_type: str = "dataset") -> Dict[str, bytes]:
        """``{path: content}`` of every file at a revision (LFS files' content included)."""
        with self.lock:
            repo = self.repo(repo_id, repo_type)
            commit = repo.resolve(revision)
            return {p: self._content(repo, e) for p, e in sorted(commit.files.items())}

    def lfs_files(self, repo_id: str, revision: str = "main", repo_type: str = "dataset") -> Dict[str, str]:
        """``{path: sha256}`` of the files stored as LFS at a revision."""
        with self.lock:
            commit = self.repo(repo_id, repo_type).resolve(revision)
            return {p: e.lfs_oid for p, e in sorted(commit.files.items()) if e.lfs_oid}

    def lfs_objects(self, repo_id: str, repo_type: str = "dataset") -> set:
        """sha256 of every LFS object stored for the repo (committed or not)."""
        with self.lock:
            return set(self.repo(repo_id, repo_type).lfs)

    def tags(self, repo_id: str, repo_type: str = "dataset") -> Dict[str, str]:
        with self.lock:
            return dict(self.repo(repo_id, repo_type).tags)

    def branches(self, repo_id: str, repo_type: str = "dataset") -> Dict[str, str]:
        with self.lock:
            return dict(self.repo(repo_id, repo_type).branches)

    def commits(self, repo_id: str, revision: str = "main", repo_type: str = "dataset") -> List[Commit]:
        """Commits reachable from ``revision``, newest first."""
        with self.lock:
            repo = self.repo(repo_id, repo_type)
            return list(repo.history(repo.resolve(revision)))

    # -- internals shared with the handler

    @staticmethod
    def _content(repo: Repo, entry: Entry) -> bytes:
        if entry.data is not None:
            return entry.data
        return repo.lfs[entry.lfs_oid]

    def _new_commit(self, repo: Repo, parent: Optional[Commit], files: Dict[str, Entry], title: str,
                    message: str, author: str) -> Commit:
        self._commit_counter += 1
        h = hashlib.sha1()
        h.update(f"{self._salt}\0{self._commit_counter}\0{parent.sha if parent else ''}\0{title}\0{message}\0".encode())
        for p, e in sorted(files.items()):
            h.update(f"{p}\0{e.git_oid}\n".encode())
        commit = Commit(h.hexdigest(), parent.sha if parent else None, files, title, message, _now(), author)
        repo.commits[commit.sha] = commit
        return commit

    def _create_repo(self, repo_type: str, repo_id: str, private: bool, author: str) -> Repo:
        repo = Repo(repo_type=repo_type, repo_id=repo_id, private=private, created_at=_now())
        data = DEFAULT_GITATTRIBUTES.encode()
        files = {".gitattributes": Entry(size=len(data), git_oid=git_blob_sha1(data), data=data)}
        commit = self._new_commit(repo, None, files, "initial commit", "", author)
        repo.branches["main"] = commit.sha
        self.repos[(repo_type, repo_id)] = repo
        return repo

    def repo_url(self, repo_type: str, repo_id: str) -> str:
        return f"{self.url}/{URL_PREFIX[repo_type]}{repo_id}"


# --------------------------------------------------------------------------- HTTP


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the Hub
    server_version = "FakeHub/1.0"

    # quiet
    def log_message(self, format, *args):  # noqa: A002
        pass

    @property
    def hub(self) -> HubServer:
        return self.server.hub  # type: ignore[attr-defined]

    # -- plumbing

    def _read_body(self) -> bytes:
        if getattr(self, "_body", None) is not None:
            return self._body
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                line = self.rfile.readline().strip()
                size = int(line.split(b";")[0] or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():  # trailers
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()  # CRLF after the chunk
            body = b"".join(chunks)
        else:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
        self._body = body
        return body

    def _json_body(self):
        body = self._read_body()
        if not body:
            return {}
        try:
            return json.loads(body)
        except ValueError:
            raise HubError(400, "Invalid JSON body")

    def _send(self, status: int, body: bytes = b"", headers: Optional[Dict[str, str]] = None,
              content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)
        self._status = status

    def _send_json(self, obj, status: int = 200, headers: Optional[Dict[str, str]] = None) -> None:
        self._send(status, json.dumps(obj).encode(), headers)

    def _send_error(self, err: HubError) -> None:
        headers = {"X-Error-Message": err.message}
        if err.code:
            headers["X-Error-Code"] = err.code
        self._send_json({"error": err.message, **err.extra}, err.status, headers)

    # -- auth

    def _user(self) -> Optional[str]:
        """The user of a valid token; None without a token; 401 for an invalid token."""
        auth = self.headers.get("Authorization") or ""
        if not auth:
            return None
        scheme, _, token = auth.partition(" ")
        user = self.hub.tokens.get(token.strip()) if scheme.lower() == "bearer" else None
        if user is None:
            raise HubError(401, "Invalid credentials in Authorization header")
        return user

    def _require_user(self) -> str:
        user = self._user()
        if user is None:
            raise HubError(401, "Invalid username or password.")
        return user

    def _get_repo(self, repo_type: str, repo_id: str, write: bool = False) -> Repo:
        user = self._require_user() if write else self._user()
        if not write and user is None and self.hub.read_requires_token:
            raise HubError(401, "Invalid username or password.")
        repo = self.hub.repos.get((repo_type, repo_id))
        if repo is None or (repo.private and user is None):
            raise HubError(404, "Repository not found", "RepoNotFound")
        return repo

    # -- dispatch

    def do_GET(self):
        self._handle()

    def do_HEAD(self):
        self._handle()

    def do_POST(self):
        self._handle()

    def do_PUT(self):
        self._handle()

    def do_DELETE(self):
        self._handle()

    def _handle(self) -> None:
        self._body = None
        self._status = 0
        split = urllib.parse.urlsplit(self.path)
        self.query = urllib.parse.parse_qs(split.query, keep_blank_values=True)
        segs = [urllib.parse.unquote(s) for s in split.path.split("/")[1:]]
        route = self._route(self.command, segs)
        kind = route[0] if route else "unknown"
        with self.hub.lock:
            self.hub.counts[kind] += 1
        try:
            # Always read the whole body first: keep-alive clients break otherwise.
            self._read_body()
            status = self.hub._should_fail(kind)
            if status is not None:
                raise HubError(status, f"Injected failure ({kind})")
            if route is None:
                raise HubError(404, f"Not found: {self.command} {split.path}")
            _, handler, args = route
            with self.hub.lock:
                handler(*args)
        except HubError as err:
            self._send_error(err)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception:
            self.hub.errors.append(traceback.format_exc())
            try:
                self._send_error(HubError(500, "Internal server error"))
            except Exception:
                self.close_connection = True
        finally:
            with self.hub.lock:
                self.hub.requests.append((kind, self.command, self.path, self._status))

    def _route(self, method: str, segs: List[str]):
        """(kind, handler, args) or None."""
        if segs[:1] == ["api"]:
            rest = segs[1:]
            if rest == ["whoami-v2"] and method == "GET":
                return "whoami", self.whoami, ()
            if rest == ["validate-yaml"] and method == "POST":
                return "validate_yaml", self.validate_yaml, ()
            if rest == ["repos", "create"] and method == "POST":
                return "create_repo", self.create_repo, ()
            if rest == ["repos", "delete"] and method == "DELETE":
                return "delete_repo", self.delete_repo, ()
            if len(rest) >= 3 and rest[0] in API_PLURAL:
                repo_type, repo_id, tail = API_PLURAL[rest[0]], "/".join(rest[1:3]), rest[3:]
                op = tail[0] if tail else ""
                if method == "GET" and not tail:
                    return "repo_info", self.repo_info, (repo_type, repo_id, "main")
                if method == "GET" and op == "revision" and len(tail) >= 2:
                    return "repo_info", self.repo_info, (repo_type, repo_id, "/".join(tail[1:]))
                if method == "GET" and op == "refs" and len(tail) == 1:
                    return "refs", self.refs, (repo_type, repo_id)
                if method == "GET" and op == "tree" and len(tail) >= 2:
                    return "tree", self.tree, (repo_type, repo_id, tail[1], "/".join(tail[2:]))
                if method == "POST" and op == "paths-info" and len(tail) == 2:
                    return "paths_info", self.paths_info, (repo_type, repo_id, tail[1])
                if method == "GET" and op == "commits" and len(tail) == 2:
                    return "commits", self.commits, (repo_type, repo_id, tail[1])
                if method == "POST" and op == "preupload" and len(tail) == 2:
                    return "preupload", self.preupload, (repo_type, repo_id, tail[1])
                if method == "POST" and op == "commit" and len(tail) == 2:
                    return "commit", self.commit, (repo_type, repo_id, tail[1])
                if method == "POST" and op == "tag" and len(tail) == 2:
                    return "tag_create", self.tag_create, (repo_type, repo_id, tail[1])
                if method == "DELETE" and op == "tag" and len(tail) == 2:
                    return "tag_delete", self.tag_delete, (repo_type, repo_id, tail[1])
                if method == "POST" and op == "branch" and len(tail) == 2:
                    return "branch_create", self.branch_create, (repo_type, repo_id, tail[1])
                if method == "DELETE" and op == "branch" and len(tail) == 2:
                    return "branch_delete", self.branch_delete, (repo_type, repo_id, tail[1])
            return None
        if segs[:1] == ["_lfs"] and method == "PUT" and len(segs) == 5:
            # /_lfs/<type>/<ns>/<name>/<oid>?sig=...
            return "lfs_put", self.lfs_put, (segs[1], "/".join(segs[2:4]), segs[4])
        repo_type = "model"
        rest = segs
        if segs and segs[0] in API_PLURAL and segs[0] != "models":
            repo_type, rest = API_PLURAL[segs[0]], segs[1:]
        if len(rest) == 6 and rest[1].endswith(".git") and rest[2:] == ["info", "lfs", "objects", "batch"] \
                and method == "POST":
            return "lfs_batch", self.lfs_batch, (repo_type, f"{rest[0]}/{rest[1][:-4]}")
        if len(rest) >= 5 and rest[2] == "resolve" and method in ("GET", "HEAD"):
            kind = "resolve" if method == "GET" else "resolve_head"
            return kind, self.resolve, (repo_type, "/".join(rest[:2]), rest[3], "/".join(rest[4:]))
        return None

    # -- endpoints: account

    def whoami(self):
        user = self._require_user()
        self._send_json({
            "type": "user",
            "id": hashlib.sha1(user.encode()).hexdigest()[:24],
            "name": user,
            "fullname": user,
            "email": None,
            "emailVerified": False,
            "canPay": False,
            "isPro": False,
            "periodEnd": None,
            "avatarUrl": "",
            "orgs": [],
            "auth": {"type": "access_token", "accessToken": {"displayName": "test", "role": "write"}},
        })

    def validate_yaml(self):
        self._user()  # an invalid token is refused, no token is fine
        self._send_json({"errors": [], "warnings": []})

    # -- endpoints: repos

    def create_repo(self):
        user = self._require_user()
        body = self._json_body()
        name = body.get("name")
        if not name or "/" in name:
            raise HubError(400, f"Invalid repo name: {name!r}")
        repo_type = body.get("type") or "model"
        if repo_type not in REPO_TYPES:
            raise HubError(400, f"Invalid repo type: {repo_type!r}")
        repo_id = f"{body.get('organization') or user}/{name}"
        url = self.hub.repo_url(repo_type, repo_id)
        if (repo_type, repo_id) in self.hub.repos:
            raise HubError(409, f"You already created this {repo_type} repo", url=url)
        self.hub._create_repo(repo_type, repo_id, bool(body.get("private")), user)
        self._send_json({"url": url, "name": repo_id, "id": repo_id})

    def delete_repo(self):
        user = self._require_user()
        body = self._json_body()
        repo_type = body.get("type") or "model"
        repo_id = f"{body.get('organization') or user}/{body.get('name')}"
        if self.hub.repos.pop((repo_type, repo_id), None) is None:
            raise HubError(404, "Repository not found", "RepoNotFound")
        self._send_json({})

    def _card_data(self, repo: Repo, commit: Commit):
        entry = commit.files.get("README.md")
        if entry is None:
            return None
        text = self.hub._content(repo, entry).decode("utf-8", "replace")
        if not text.startswith("---"):
            return None
        end = text.find("\n---", 3)
        if end < 0:
            return None
        try:
            import yaml  # a dependency of huggingface_hub; cardData is optional anyway
        except ImportError:
            return None
        try:
            data = yaml.safe_load(text[3:end])
        except Exception:
            return None
        return data if isinstance(data, dict) else None

    def repo_info(self, repo_type: str, repo_id: str, revision: str):
        repo = self._get_repo(repo_type, repo_id)
        commit = repo.resolve(revision)
        blobs = (self.query.get("blobs") or ["false"])[0].lower() in ("1", "true")
        siblings = []
        for path, e in sorted(commit.files.items()):
            sib = {"rfilename": path}
            if blobs:
                sib.update(size=e.size, blobId=e.git_oid)
                if e.is_lfs:
                    sib["lfs"] = {"sha256": e.lfs_oid, "size": e.size, "pointerSize": e.pointer_size}
            siblings.append(sib)
        info = {
            "_id": hashlib.sha1(f"{repo_type}/{repo_id}".encode()).hexdigest()[:24],
            "id": repo_id,
            "author": repo_id.split("/")[0],
            "sha": commit.sha,
            "lastModified": commit.date,
            "createdAt": repo.created_at,
            "private": repo.private,
            "gated": False,
            "disabled": False,
            "downloads": 0,
            "likes": 0,
            "tags": [],
            "siblings": siblings,
            "usedStorage": sum(e.size for e in commit.files.values()),
            "xetEnabled": False,
        }
        if repo_type == "model":
            info["modelId"] = repo_id
        card = self._card_data(repo, commit)
        if card is not None:
            info["cardData"] = card
        self._send_json(info)

    def refs(self, repo_type: str, repo_id: str):
        repo = self._get_repo(repo_type, repo_id)
        self._send_json({
            "branches": [
                {"name": n, "ref": f"refs/heads/{n}", "targetCommit": s} for n, s in sorted(repo.branches.items())
            ],
            "tags": [{"name": n, "ref": f"refs/tags/{n}", "targetCommit": s} for n, s in sorted(repo.tags.items())],
            "converts": [],
            "pullRequests": [],
        })

    # -- endpoints: listing

    def _last_commit(self, repo: Repo, commit: Commit, path: str, is_dir: bool) -> dict:
        def value(c: Commit):
            if is_dir:
                return _folder_oid(c.files, path)
            e = c.files.get(path)
            return e.git_oid if e else None

        current = commit
        v = value(current)
        for parent in list(repo.history(commit))[1:]:
            if value(parent) != v:
                break
            current = parent
        return {"id": current.sha, "title": current.title, "date": current.date}

    def _entry_json(self, repo: Repo, commit: Commit, path: str, expand: bool) -> Optional[dict]:
        e = commit.files.get(path)
        if e is not None:
            out = {"type": "file", "oid": e.git_oid, "size": e.size, "path": path}
            if e.is_lfs:
                out["lfs"] = {"oid": e.lfs_oid, "size": e.size, "pointerSize": e.pointer_size}
            if expand:
                out["lastCommit"] = self._last_commit(repo, commit, path, False)
                out["securityFileStatus"] = {"status": "safe", "avScan": {"virusFound": False, "virusNames": None},
                                             "pickleImportScan": None}
            return out
        oid = _folder_oid(commit.files, path) if path else None
        if oid is None:
            return None
        out = {"type": "directory", "oid": oid, "size": 0, "path": path}
        if expand:
            out["lastCommit"] = self._last_commit(repo, commit, path, True)
        return out

    @staticmethod
    def _flag(value: Optional[List[str]]) -> bool:
        return bool(value) and value[0].lower() in ("1", "true")

    def tree(self, repo_type: str, repo_id: str, revision: str, path: str):
        repo = self._get_repo(repo_type, repo_id)
        commit = repo.resolve(revision)
        path = path.strip("/")
        recursive = self._flag(self.query.get("recursive"))
        expand = self._flag(self.query.get("expand"))
        dirs = _dirs_of(commit.files)
        if path and path not in dirs:
            raise HubError(404, f"Entry not found: {path}", "EntryNotFound")
        prefix = path + "/" if path else ""
        children = set()
        for p in commit.files:
            if not p.startswith(prefix):
                continue
            parts = p[len(prefix):].split("/")
            if recursive:
                for i in range(1, len(parts) + 1):
                    children.add(prefix + "/".join(parts[:i]))
            else:
                children.add(prefix + parts[0])
        # folders first, as the Hub does
        ordered = sorted(children, key=lambda p: (p not in dirs, p))
        self._send_json([self._entry_json(repo, commit, p, expand) for p in ordered])

    def paths_info(self, repo_type: str, repo_id: str, revision: str):
        repo = self._get_repo(repo_type, repo_id)
        commit = repo.resolve(revision)
        body = self._read_body()
        ctype = (self.headers.get("Content-Type") or "").lower()
        if "json" in ctype:
            data = json.loads(body or b"{}")
            paths, expand = data.get("paths") or [], bool(data.get("expand"))
        else:
            form = urllib.parse.parse_qs(body.decode(), keep_blank_values=True)
            paths, expand = form.get("paths", []), self._flag(form.get("expand"))
        if isinstance(paths, str):
            paths = [paths]
        out = []
        for p in paths:
            entry = self._entry_json(repo, commit, p.strip("/"), expand)
            if entry is not None:
                out.append(entry)
        self._send_json(out)

    def commits(self, repo_type: str, repo_id: str, revision: str):
        repo = self._get_repo(repo_type, repo_id)
        commit = repo.resolve(revision)
        self._send_json([
            {"id": c.sha, "title": c.title, "message": c.message, "date": c.date,
             "authors": [{"user": c.author, "avatar": ""}]}
            for c in repo.history(commit)
        ])

    # -- endpoints: writing

    def _branch_commit(self, repo: Repo, revision: str) -> Tuple[str, Commit]:
        branch = revision[len("refs/heads/"):] if revision.startswith("refs/heads/") else revision
        if branch not in repo.branches:
            repo.resolve(revision)  # 404 RevisionNotFound when it is nothing at all
            raise HubError(400, f"Invalid rev id: {revision} is not a branch")
        return branch, repo.commits[repo.branches[branch]]

    def preupload(self, repo_type: str, repo_id: str, revision: str):
        repo = self._get_repo(repo_type, repo_id, write=True)
        if self._flag(self.query.get("create_pr")):
            raise HubError(400, "Pull requests are not supported by this test server")
        commit = repo.resolve(revision)
        body = self._json_body()
        patterns = _gitattributes_lfs_patterns(commit.files, repo)
        out = []
        for f in body.get("files", []):
            path, size = f["path"], int(f.get("size", 0))
            sample = base64.b64decode(f.get("sample", "") or "")
            if path == ".gitattributes" or size == 0:
                mode = "regular"
            elif size >= LFS_SIZE_THRESHOLD or b"\0" in sample or _matches_gitattributes(path, patterns):
                mode = "lfs"
            else:
                mode = "regular"
            item = {"path": path, "uploadMode": mode, "shouldIgnore": False}
            existing = commit.files.get(path)
            if existing is not None:
                item["oid"] = existing.remote_oid
            out.append(item)
        self._send_json({"files": out, "commitOid": commit.sha})

    def lfs_batch(self, repo_type: str, repo_id: str):
        repo = self._get_repo(repo_type, repo_id, write=True)
        body = self._json_body()
        if body.get("operation") != "upload":
            raise HubError(400, "Only the 'upload' operation is supported")
        out = []
        for obj in body.get("objects", []):
            oid, size = str(obj.get("oid")), int(obj.get("size", -1))
            item = {"oid": oid, "size": size, "authenticated": True}
            stored = repo.lfs.get(oid)
            if len(oid) != 64 or size < 0:
                item["error"] = {"code": 422, "message": "Invalid object"}
            elif stored is not None and len(stored) != size:
                item["error"] = {"code": 422, "message": "Size mismatch with the stored object"}
            elif stored is None:
                sig = secrets.token_hex(16)
                repo.upload_sigs[sig] = oid
                href = f"{self.hub.url}/_lfs/{repo_type}/{repo_id}/{oid}?sig={sig}"
                item["actions"] = {"upload": {"href": href, "header": {}, "expires_in": 3600}}
            # already stored: no actions => the client skips the upload
            out.append(item)
        self._send(200, json.dumps({"transfer": "basic", "objects": out, "hash_algo": "sha256"}).encode(),
                   content_type="application/vnd.git-lfs+json")

    def lfs_put(self, repo_type: str, repo_id: str, oid: str):
        repo = self.hub.repos.get((repo_type, repo_id))
        if repo is None:
            raise HubError(404, "Repository not found", "RepoNotFound")
        sig = (self.query.get("sig") or [""])[0]
        if repo.upload_sigs.get(sig) != oid:
            raise HubError(403, "Invalid or expired upload signature")
        body = self._read_body()
        if hashlib.sha256(body).hexdigest() != oid:
            raise HubError(400, "Content does not match its sha256")
        repo.lfs[oid] = body
        repo.upload_sigs.pop(sig, None)
        self._send(200, b"", {"ETag": f'"{hashlib.md5(body).hexdigest()}"'}, content_type="text/plain")

    def commit(self, repo_type: str, repo_id: str, revision: str):
        user = self._require_user()
        repo = self._get_repo(repo_type, repo_id, write=True)
        if self._flag(self.query.get("create_pr")):
            raise HubError(400, "Pull requests are not supported by this test server")
        branch, head = self._branch_commit(repo, revision)
        lines = [json.loads(line) for line in self._read_body().splitlines() if line.strip()]
        if not lines or lines[0].get("key") != "header":
            raise HubError(400, "The first line of the commit payload must be its header")
        header = lines[0].get("value") or {}
        parent = header.get("parentCommit")
        if parent and parent != head.sha:
            raise HubError(412, f"A commit has happened since {parent}: {branch} is at {head.sha}")
        files = dict(head.files)
        for line in lines[1:]:
            key, value = line.get("key"), line.get("value") or {}
            path = str(value.get("path", "")).strip("/")
            if key == "file":
                if value.get("encoding", "base64") != "base64":
                    raise HubError(400, f"Unsupported encoding for {path}")
                data = base64.b64decode(value.get("content", ""))
                files[path] = Entry(size=len(data), git_oid=git_blob_sha1(data), data=data)
            elif key == "lfsFile":
                oid = value.get("oid")
                if oid not in repo.lfs:
                    raise HubError(422, f"LFS object {oid} for {path} was never uploaded")
                size = len(repo.lfs[oid])
                if value.get("size") is not None and int(value["size"]) != size:
                    raise HubError(422, f"Size mismatch for {path}")
                files[path] = Entry(size=size, git_oid=git_blob_sha1(lfs_pointer(oid, size)), lfs_oid=oid)
            elif key == "deletedFile":
                if path not in files:
                    raise HubError(404, f"A file with this name doesn't exist: {path}", "EntryNotFound")
                del files[path]
            elif key == "deletedFolder":
                below = [p for p in files if p.startswith(path + "/")] if path else list(files)
                if not below:
                    raise HubError(404, f"A folder with this name doesn't exist: {path}", "EntryNotFound")
                for p in below:
                    del files[p]
            else:
                raise HubError(400, f"Unknown commit operation {key!r}")
        commit = self.hub._new_commit(repo, head, files, header.get("summary") or "Commit",
                                      header.get("description") or "", user)
        repo.branches[branch] = commit.sha
        self._send_json({
            "success": True,
            "commitOid": commit.sha,
            "commitUrl": f"{self.hub.repo_url(repo_type, repo_id)}/commit/{commit.sha}",
            "commitMessage": commit.title,
            "commitDescription": commit.message,
            "pullRequestUrl": None,
        })

    def tag_create(self, repo_type: str, repo_id: str, revision: str):
        repo = self._get_repo(repo_type, repo_id, write=True)
        commit = repo.resolve(revision)
        tag = (self._json_body().get("tag") or "").strip()
        if not tag:
            raise HubError(400, "Missing tag name")
        if tag in repo.tags:
            raise HubError(409, f"Tag {tag} already exists")
        repo.tags[tag] = commit.sha
        self._send_json({"name": tag, "ref": f"refs/tags/{tag}", "targetCommit": commit.sha})

    def tag_delete(self, repo_type: str, repo_id: str, tag: str):
        repo = self._get_repo(repo_type, repo_id, write=True)
        if repo.tags.pop(tag, None) is None:
            raise HubError(404, f"Invalid rev id: {tag}", "RevisionNotFound")
        self._send_json({})

    def branch_create(self, repo_type: str, repo_id: str, branch: str):
        repo = self._get_repo(repo_type, repo_id, write=True)
        start = self._json_body().get("startingPoint") or "main"
        commit = repo.resolve(start)
        if branch in repo.branches:
            raise HubError(409, f"Branch {branch} already exists")
        repo.branches[branch] = commit.sha
        self._send_json({})

    def branch_delete(self, repo_type: str, repo_id: str, branch: str):
        repo = self._get_repo(repo_type, repo_id, write=True)
        if branch == "main" or repo.branches.pop(branch, None) is None:
            raise HubError(404 if branch != "main" else 403, f"Cannot delete branch {branch}",
                           "RevisionNotFound" if branch != "main" else None)
        self._send_json({})

    # -- endpoints: files

    def resolve(self, repo_type: str, repo_id: str, revision: str, path: str):
        repo = self._get_repo(repo_type, repo_id)
        commit = repo.resolve(revision)
        entry = commit.files.get(path)
        if entry is None:
            raise HubError(404, f"Entry not found: {path}", "EntryNotFound")
        data = self.hub._content(repo, entry)
        headers = {"X-Repo-Commit": commit.sha, "Accept-Ranges": "bytes"}
        if entry.is_lfs:
            headers.update({"ETag": f'"{entry.lfs_oid}"', "X-Linked-Etag": f'"{entry.lfs_oid}"',
                            "X-Linked-Size": str(entry.size)})
        else:
            headers["ETag"] = f'"{entry.git_oid}"'
        rng = self.headers.get("Range")
        if rng and self.command == "GET":
            span = _parse_range(rng, len(data))
            if span is None:
                self._send(416, b"", {**headers, "Content-Range": f"bytes */{len(data)}"},
                           content_type="application/octet-stream")
                return
            start, end = span
            headers["Content-Range"] = f"bytes {start}-{end - 1}/{len(data)}"
            self._send(206, data[start:end], headers, content_type="application/octet-stream")
            return
        self._send(200, data, headers, content_type="application/octet-stream")


def _parse_range(header: str, size: int) -> Optional[Tuple[int, int]]:
    """``bytes=a-b`` / ``bytes=a-`` / ``bytes=-n`` -> half-open (start, end), None when unsatisfiable."""
    unit, _, spec = header.partition("=")
    if unit.strip().lower() != "bytes" or "," in spec:
        return (0, size) if size else None
    first, _, last = spec.strip().partition("-")
    try:
        if first == "":
            n = int(last)
            return (max(size - n, 0), size) if n > 0 and size else None
        start = int(first)
        end = int(last) + 1 if last else size
    except ValueError:
        return (0, size) if size else None
    end = min(end, size)
    if start >= size or start >= end:
        return None
    return start, end


# --------------------------------------------------------------------------- client side


@contextlib.contextmanager
def hub_environment(url: str):
    """Point huggingface_hub and datasets at ``url`` and switch their offline mode off; restore on exit.

    tests/conftest.py sets HF_HUB_OFFLINE=1 / HF_DATASETS_OFFLINE=1 before those libraries are
    imported, so their module-level constants are already computed: this patches the environment
    AND the constants (and the URL templates derived from HF_ENDPOINT), and resets huggingface_hub's
    cached HTTP sessions (a session made while offline refuses every request) and ``HfFileSystem``'s instances.
    Also: HF_HUB_DISABLE_XET=1, telemetry and datasets' download counts off, datasets' parquet-export
    lookup off (it would ask ``datasets-server.<host>``), HF_TOKEN / HUGGING_FACE_HUB_TOKEN unset.
    """
    import datasets.config as ds_config
    import huggingface_hub.constants as hf_constants
    import huggingface_hub.file_download as hf_file_download
    from huggingface_hub import HfFileSystem
    from huggingface_hub.utils import reset_sessions

    url = url.rstrip("/")
    env = {
        "HF_ENDPOINT": url,
        "HF_HUB_OFFLINE": "0",
        "HF_DATASETS_OFFLINE": "0",
        "HF_HUB_DISABLE_XET": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_UPDATE_DOWNLOAD_COUNTS": "0",
        "HF_TOKEN": None,
        "HUGGING_FACE_HUB_TOKEN": None,
    }
    file_template = url + "/{repo_id}/resolve/{revision}/{filename}"
    attrs = [
        (hf_constants, "ENDPOINT", url),
        (hf_constants, "HUGGINGFACE_CO_URL_TEMPLATE", file_template),
        (hf_constants, "HF_HUB_OFFLINE", False),
        (hf_constants, "HF_HUB_DISABLE_XET", True),
        (hf_constants, "HF_HUB_DISABLE_TELEMETRY", True),
        (hf_file_download, "HUGGINGFACE_CO_URL_TEMPLATE", file_template),
        (ds_config, "HF_ENDPOINT", url),
        (ds_config, "HUB_DATASETS_URL", url + "/datasets/{repo_id}/resolve/{revision}/{path}"),
        (ds_config, "HF_HUB_OFFLINE", False),
        (ds_config, "HF_DATASETS_OFFLINE", False),
        (ds_config, "HF_UPDATE_DOWNLOAD_COUNTS", False),
        (ds_config, "USE_PARQUET_EXPORT", False),
    ]
    saved_env = {k: os.environ.get(k) for k in env}
    saved_attrs = [(mod, name, getattr(mod, name)) for mod, name, _ in attrs]
    try:
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        for mod, name, value in attrs:
            setattr(mod, name, value)
        reset_sessions()
        HfFileSystem.clear_instance_cache()  # fsspec keeps file systems made for an earlier server's endpoint
        yield url
    finally:
        for mod, name, value in saved_attrs:
            setattr(mod, name, value)
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        reset_sessions()
        HfFileSystem.clear_instance_cache()
