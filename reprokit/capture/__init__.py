"""The in-job recorder of `reprokit capture` (and REPROKIT_CAPTURE=DIR): it runs inside the user's own processes,
at the child layer, and writes the failing graph as a case folder graph trials can take."""
