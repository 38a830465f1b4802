"""Progress as events: what a use case reports (an Event and its keyword data) through its Emit, never printing;
the CLI renders them (cli_render, cli_live) and counts them by phase (cli_tally)."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum


class Event(StrEnum):
    """Each kind of progress event. A StrEnum: equal to its name as a string, as the renderers' tables key it."""

    RUN_DIR = "run_dir"
    NOTE = "note"
    PHASE = "phase"
    TRIAL = "trial"
    TRIAL_START = "trial_start"
    ORIGINAL = "original"
    LADDER_START = "ladder_start"
    STAGE = "stage"
    GRAPH = "graph"
    CONFIGS = "configs"
    SUBSYSTEMS = "subsystems"
    SUBSYSTEM = "subsystem"
    MODES = "modes"
    MINIFY_START = "minify_start"
    MINIFY_STEP = "minify_step"
    MINIFIED = "minified"
    PACKED = "packed"
    VERSION = "version"
    CHECK = "check"


# How a use case reports progress: emit(Event.NOTE, text=...). The one definition every layer uses.
Emit = Callable[..., None]
