"""The package list, found rather than written by hand; the rest of the build's settings are in pyproject.toml."""

from setuptools import find_namespace_packages, setup

# A hand-kept list once built a wheel without reprokit.capture (#44). Namespace discovery also takes
# reprokit/child/starthook, a folder without __init__.py: trials put it on PYTHONPATH for its sitecustomize.py.
# templates/ sits beside the package in the checkout (ARCHITECTURE.md) and installs as reprokit.templates;
# pyproject.toml's find table cannot map one folder of its own, hence this file.
PACKAGES = find_namespace_packages(include=["reprokit", "reprokit.*"], exclude=["*.__pycache__"])

setup(packages=[*PACKAGES, "reprokit.templates"], package_dir={"reprokit.templates": "templates"})
