"""dogood's version, in a leaf module so that any module can record it without importing the package's top level."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("dogood")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.3.0"
