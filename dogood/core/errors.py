"""Errors that name what went wrong and where."""


class DogoodError(Exception):
    """Base class: every error dogood raises on bad input or configuration."""


class DocumentError(DogoodError):
    """A document (or the file it came from) is malformed.

    The message always names the document id and, when known, the file.
    """

    def __init__(self, message: str, *, doc_id: str | None = None, path: str | None = None):
        self.doc_id = doc_id
        self.path = path
        where = []
        if doc_id is not None:
            where.append(f"document {doc_id!r}")
        if path is not None:
            where.append(f"file {path}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)
        self.reason = message


class SourceError(DogoodError):
    """A source cannot be found, downloaded, verified or read as a whole."""


class RecipeError(DogoodError):
    """A recipe file is malformed or names something that does not exist."""


class ModelError(DogoodError):
    """A model cannot be found, loaded or applied to the documents."""
