"""reprokit: from a failing torch.compile script to a minimal standalone repro and an upstream-ready report."""

from importlib.metadata import PackageNotFoundError, version

try:
    # The installed distribution's version, the one `reprokit --version` prints: repro.py, ISSUE.md and every
    # template say which reprokit wrote them, so one number, pyproject.toml's, reaches all of them.
    __version__ = version("reprokit")
except PackageNotFoundError:  # a checkout put on sys.path by hand, never installed
    __version__ = "0+unknown"
