"""torch's compiler config (dynamo's, inductor's, functorch's) read and set by dotted name. compat hands over the
config modules and their defaults; what is read from them, and how, is here. Imported only in trial children."""

from __future__ import annotations

import functools
import warnings
from typing import Any

from reprokit import compat
from reprokit.data.values import is_plain


def inductor_config_values(names) -> dict:
    """Current values of the named inductor config entries (dotted names), skipping unknown ones."""
    cfg = compat.inductor_config()
    out = {}
    for name in names:
        try:
            out[name] = functools.reduce(getattr, name.split("."), cfg)
        except AttributeError:  # not in this torch
            continue
    return out


def non_default_configs(objects: bool = False) -> dict:
    """Non-default config entries of dynamo, inductor and functorch as {"module.name": value}; with `objects`,
    also the entries holding a callable or object the script set (custom passes), as live values."""
    modules = compat.config_modules()
    out: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _collect_non_default(out, modules, objects)
    return out


def _collect_non_default(out: dict, modules, objects: bool) -> None:
    for mod in modules:
        for name, default in compat.config_defaults_in(mod).items():
            try:
                value = functools.reduce(getattr, name.split("."), mod)
            except Exception:
                continue
            plain = is_plain(value) and is_plain(default)
            if (plain and value != default) or (objects and not plain and value is not default and value):
                out[f"{mod.__name__}.{name}"] = value


def config_defaults(full_names) -> dict:
    """{"inductor name": default} for dotted "<inductor's config module>.X" names (as non_default_configs names them)."""
    icfg = compat.inductor_config()
    prefix = icfg.__name__ + "."
    defaults = compat.config_defaults_in(icfg)
    out = {}
    for full in full_names:
        name = full.removeprefix(prefix)
        if full.startswith(prefix) and name in defaults:
            out[name] = defaults[name]
    return out


def set_inductor_config(name: str, value) -> None:
    """<inductor's config module>.<dotted name> = value (e.g. "cpp.inject_relu_bug_TESTING_ONLY")."""
    icfg = compat.inductor_config()
    obj, parts = icfg, name.split(".")
    for p in parts[:-1]:
        obj = getattr(obj, p)
    if not hasattr(obj, parts[-1]):
        raise ValueError(f"{icfg.__name__} has no {name}")
    setattr(obj, parts[-1], value)
