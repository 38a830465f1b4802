"""Config flips: the compiler settings that, flipped, make the failure go away (a minimal set of them)."""
from __future__ import annotations

from typing import Optional

from reprokit.data.records import Outcome
from reprokit.data.stages import GPU_ONLY_FLAGS, STAGE_CONFIG_FLIPS
from reprokit.search import ddmin
from reprokit.data.trial_files import trial_record
from reprokit.bisect.session import Session


def candidate_flips(stage: str, state: dict) -> dict:
    """name -> flipped value of every setting worth trying for `stage`, from what the failing child recorded."""
    flips: dict = {}
    if stage == "inductor":
        on_gpu = bool(state.get("cuda"))
        for name, value in (state.get("flag_values") or {}).items():
            if name in GPU_ONLY_FLAGS and not on_gpu:
                continue
            flips[name] = not value
        prefix = "torch._inductor.config."  # config names as the child reports them
        for name, value in (state.get("user_configs") or {}).items():
            if name.startswith(prefix):
                short = name[len(prefix):]
                flips[short] = _default_of(short, value, state)
    else:
        for row in STAGE_CONFIG_FLIPS.get(stage, ()):
            flips["functorch." + row["name"]] = row["value"]
    return flips


def config_flips(s: Session, stage: str, failing: Outcome) -> Optional[dict]:
    """Flips that fix it alone; failing that, a minimal set that fixes it together; None when none does."""
    flips = candidate_flips(stage, trial_record(failing.trial_dir))
    if not flips:
        return None
    names = list(flips)
    specs = [s.spec(stage, f"config-{n}", config={n: flips[n]}) for n in names]
    outcomes = s.runner.map(specs)
    fixes = [n for n, out in zip(names, outcomes) if out is not None and out.kind == "pass"]
    s.emit("configs", tried=len(names), fixes=fixes)
    if fixes:
        return {n: flips[n] for n in fixes}
    everything = s.runner(s.spec(stage, "config-all", config=dict(flips)))
    if everything.kind != "pass":
        return None

    def still_passes(subset):
        if not subset:
            return False
        return s.runner(s.spec(stage, "config-set", config={n: flips[n] for n in subset})).kind == "pass"

    # ddmin looks for a minimal subset that *passes*.
    minimal = ddmin(names, still_passes)
    return {n: flips[n] for n in minimal}


def _default_of(name: str, current, state: dict):
    """The default value of an inductor config entry the script changed, as recorded by the child."""
    return (state.get("config_defaults") or {}).get(name, None if not isinstance(current, bool) else not current)
