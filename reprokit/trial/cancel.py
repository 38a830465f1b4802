"""A run that is stopping: its trials have no answer, and none is journaled."""


class TrialsCancelled(Exception):
    """A trial reprokit stopped (Ctrl-C, an error elsewhere in the run, a cluster job it cancelled)."""
