"""Config flips: the compiler settings that, flipped, make the failure go away (a minimal set of them)."""

from __future__ import annotations

import dataclasses

from reprokit.bisect.session import Session, passes
from reprokit.data.events import Event
from reprokit.data.records import Outcome
from reprokit.data.stages import GPU_ONLY_FLAGS, INDUCED_BY_REPROKIT, STAGE_CONFIG_FLIPS
from reprokit.data.trial_files import trial_record
from reprokit.search import ddmin

_INDUCTOR = "torch._inductor.config."  # config names as the child reports them


def candidate_flips(stage: str, state: dict) -> dict:
    """name -> flipped value of every setting worth trying for `stage`, from what the failing child recorded."""
    flips: dict = {}
    if stage == "inductor":
        on_gpu = bool(state.get("cuda"))
        for name, value in (state.get("flag_values") or {}).items():
            if name in GPU_ONLY_FLAGS and not on_gpu:
                continue
            flips[name] = not value
        flips.update({name: _default_of(name, value, state) for name, value in script_settings(state).items()})
    else:
        for row in STAGE_CONFIG_FLIPS.get(stage, ()):
            flips[f"functorch.{row['name']}"] = row["value"]
    return flips


def script_settings(state: dict) -> dict:
    """short name -> value of the inductor settings the script itself changed (reprokit's own left out)."""
    return {
        name[len(_INDUCTOR) :]: value
        for name, value in (state.get("user_configs") or {}).items()
        if name.startswith(_INDUCTOR) and name not in INDUCED_BY_REPROKIT
    }


@dataclasses.dataclass(frozen=True)
class FirstRound:
    """The config flips' first round: every flip at once, and those asked alone that fixed the failure."""

    flips: dict  # name -> flipped value, every candidate
    fixes: tuple  # the names that fix it alone
    together: bool  # every flip at once passes
    own: tuple  # the names asked alone (the script's own settings, then the likely flips)

    @property
    def settled(self) -> bool:
        """Whether the first round is the answer: a flip fixes it alone, or none does even all together."""
        return bool(self.fixes) or not self.together

    @property
    def answer(self) -> dict | None:
        return {n: self.flips[n] for n in self.fixes} or None


def first_round(s: Session, stage: str, failing: Outcome, likely: tuple = ()) -> FirstRound | None:
    """Every flip at once, beside each setting the script changed reset alone (the likeliest fix, and usually none
    or one) and each `likely` flip alone (emulate_precision_casts for wrong numbers: a difference of precision is
    the commonest, and asked alone it spares the minimal set's search); None when there is nothing to flip. One
    round of runs side by side."""
    # The settings in force are what the script's run recorded (a graph trial records those it ran with).
    state = trial_record((s.original if s.graph_case and s.original else failing).trial_dir)
    flips = candidate_flips(stage, state)
    if not flips:
        return None
    own = [n for n in script_settings(state) if n in flips]
    own += [n for n in likely if n in flips and n not in own]
    specs = [s.spec(stage, "config-all", config=dict(flips))] + [
        s.spec(stage, f"config-{n}", config={n: flips[n]}) for n in own
    ]
    everything, *singles = s.runner.map(specs)
    fixes = tuple(n for n, out in zip(own, singles) if passes(out))
    s.emit(
        Event.CONFIGS,
        tried=len(flips),
        fixes=list(fixes),
        together=passes(everything),
        likely=[n for n in likely if n in flips],
    )
    return FirstRound(flips=flips, fixes=fixes, together=passes(everything), own=tuple(own))


def smallest_set(s: Session, stage: str, first: FirstRound) -> dict:
    """A minimal set of flips that fixes it together, after a first round where all did and none alone did: ten
    runs or more, one after another."""
    flips = first.flips
    # ddmin looks for a minimal subset that *passes*; the settings already asked alone go last.
    order = [n for n in flips if n not in first.own] + list(first.own)
    minimal = ddmin(
        order,
        lambda subset: (
            bool(subset) and passes(s.runner(s.spec(stage, "config-set", config={n: flips[n] for n in subset})))
        ),
    )
    return {n: flips[n] for n in minimal}


def config_flips(s: Session, stage: str, failing: Outcome, likely: tuple = ()) -> dict | None:
    """Flips that fix it alone; failing that, a minimal set that fixes it together; None when none does.

    When every flip together still fails the same way, no flip is asked alone: that costs one trial where asking
    each costs ten or more, for the common answer "no setting helps". It would miss a flip that fixes the failure
    only while the others stay at their values, which we accept.
    """
    return flips_asked(s, stage, failing, likely)[0]


def flips_asked(s: Session, stage: str, failing: Outcome, likely: tuple = (), search: bool = True) -> tuple:
    """(config_flips' answer, whether the smallest set's search was left): without `search`, the first round only
    (the evidence of a run whose time plan is short)."""
    first = first_round(s, stage, failing, likely)
    if first is None or first.settled:
        return (first.answer if first else None), False
    return (smallest_set(s, stage, first), False) if search else (None, True)


def _default_of(name: str, current, state: dict):
    """The default value of an inductor config entry the script changed, as recorded by the child."""
    return (state.get("config_defaults") or {}).get(name, None if not isinstance(current, bool) else not current)
