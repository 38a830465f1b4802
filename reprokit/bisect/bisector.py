"""The bisect use case: which stage, graph, config flip and subsystem application breaks a script."""
from __future__ import annotations

import dataclasses
import os
import time
from typing import Callable, Optional

from reprokit.errors import NothingToIsolate, ReprokitError
from reprokit.data.stages import GPU_ONLY_FLAGS, STAGE_CONFIG_FLIPS, STAGES, SUBSYSTEMS
from reprokit.data.records import Outcome, Signature, StageResult, TrialSpec, Verdict, file_hash
from reprokit.data.trial_files import read_observed, trial_record
from reprokit.trial.runner import Runner
from reprokit.search import ddmin, find_boundary

Emit = Callable[..., None]


@dataclasses.dataclass
class BisectOptions:
    script: str
    argv: tuple = ()
    cwd: str = ""
    timeout: Optional[float] = None
    jobs: int = 2
    repeat: int = 1
    check_accuracy: bool = False
    configs: bool = True
    subsystems: bool = True
    kind: str = "failure"  # or "slow": compiled slower than eager by more than slow_threshold is the failure
    slow_threshold: float = 0.10


class Bisector:
    """Asks the questions of a bisect run; every answer is a trial run by `runner`."""

    def __init__(self, opts: BisectOptions, runner: Runner, emit: Emit):
        self.opts = opts
        self.runner = runner
        self.emit = emit
        self.target: Optional[Signature] = None
        self.others: dict[str, dict] = {}
        self.started = time.monotonic()
        self.eager_observed: Optional[dict] = None
        self.script_hash = file_hash(opts.script)
        if opts.kind == "slow":
            runner.judge = self.judge_speed

    # -- trials ------------------------------------------------------------------------------
    def spec(self, stage: str, label: str, **kw) -> TrialSpec:
        o = self.opts
        return TrialSpec(mode="script", stage=stage, script=o.script, argv=tuple(o.argv), cwd=o.cwd,
                         script_hash=self.script_hash, check_accuracy=o.check_accuracy, observe=o.kind == "slow",
                         label=label, **kw)

    def judge_speed(self, spec: TrialSpec, outcome: Outcome) -> Outcome:
        """--kind slow: a passing compiled run whose calls are slower than eager's by more than the threshold
        fails with kind "slow". The eager reference is the no-compile baseline, the first trial."""
        from reprokit.doctor.analysis import measure_speed

        if spec.stage == "none":
            if self.eager_observed is None and outcome.kind == "pass":
                self.eager_observed = read_observed(outcome.trial_dir)
            return outcome
        if outcome.kind != "pass" or self.eager_observed is None:
            return outcome
        speed = measure_speed(self.eager_observed, read_observed(outcome.trial_dir))
        if speed.speedup is None or speed.speedup * (1 + self.opts.slow_threshold) >= 1.0:
            return dataclasses.replace(outcome, note=speed.verdict)
        return dataclasses.replace(outcome, kind="slow", note=speed.verdict, signature=Signature(
            "slow", None, f"compiled slower than eager by more than {self.opts.slow_threshold:.0%}", None))

    def fails_same(self, outcome: Optional[Outcome]) -> bool:
        """True when the trial fails the way the original did; other failures are noted as other bugs."""
        if outcome is None:
            return False
        if self.target is not None and self.target.matches(outcome.signature):
            return True
        if outcome.failed:
            key = outcome.signature.short()
            self.others.setdefault(key, {"signature": outcome.signature.to_dict(), "trial": outcome.trial_dir})
        return False

    # -- the run -----------------------------------------------------------------------------
    def run(self) -> Verdict:
        o = self.opts
        v = Verdict(script=o.script, argv=list(o.argv))
        # Torch's own logs ride along on the original: when it is the failing stage, no extra run is needed for them.
        first = [self.spec("none", "baseline-no-compile")] + [
            self.spec("user", "original", attempt=i, env=TORCH_LOGS_ENV) for i in range(o.repeat)]
        if o.kind == "failure":
            # The ladder asks the stages before inductor whatever the original says, and they are cheap next to
            # it: they start beside it. (--kind slow compares timings: one at a time, baseline first.)
            first += [self.spec(stage, f"stage-{stage}") for stage in STAGES[1:-1]]

        def limit_from_baseline(i, outcome):
            if i == 0 and o.timeout is None:
                # Compiling costs far more than running; leave room for it. --timeout overrides. Trials already
                # running take the new limit too.
                self.runner.timeout = max(120.0, 10 * outcome.seconds)
            return False

        started = self.runner.map(first, stop=limit_from_baseline)
        baseline, originals = started[0], started[1:1 + o.repeat]
        self.emit("stage", stage="none", outcome=baseline)
        # With --repeat, a failing run is the reference even when the first run happened to pass.
        original = next((x for x in originals if x is not None and x.failed), originals[0])
        self.emit("original", outcome=original)
        if not original.compiled:
            raise ReprokitError(f"{os.path.basename(o.script)} never calls torch.compile (ran without it in "
                                f"{baseline.seconds:.1f} s); reprokit bisects compiled code only")
        if original.kind == "skip":
            raise NothingToIsolate(f"the compiled run ran out of memory ({original.signature.exc_type}); that says "
                                   "nothing about the compiler: shrink the inputs or free the device, then run again")
        if not original.failed:
            if baseline.failed:
                raise NothingToIsolate(f"the script fails without compile ({baseline.signature.short()}) but passes "
                                       "compiled: nothing compiler-specific to isolate")
            if o.kind == "slow":
                raise NothingToIsolate(f"compiled is not slower than eager by more than {o.slow_threshold:.0%} "
                                       f"({original.note or 'speed not measured'}): nothing to isolate")
            hint = "" if o.check_accuracy else " (add --check-accuracy to compare every compiled graph with eager)"
            raise NothingToIsolate(f"the script passes compiled and uncompiled: nothing to isolate{hint}")
        self.target = original.signature
        v.kind = original.kind
        v.signature = original.signature.to_dict()
        v.user_backend = original.user_backend
        v.compile_args = original.compile_args
        v.graph_count = original.graphs
        fails = sum(1 for x in originals if x is not None and self.target.matches(x.signature))
        v.repro_rate = fails / len(originals)
        if baseline.failed:
            same = self.target.matches(baseline.signature)
            raise NothingToIsolate(
                "the script fails without compile too" + (" in the same way" if same else
                                                         f" ({baseline.signature.short()})")
                + ": that is not a compiler bug")
        if fails < len(originals):
            v.flaky = True
            v.message = (f"flaky: the original fails {fails} of {len(originals)} runs; not bisected, since a "
                         "flaky failure would send the search astray")
            return self.finish(v, decisive={"first_failing": original.trial_dir})

        ladder = self.ladder(original)
        v.ladder = [dataclasses.asdict(r) for r in ladder]
        failing = next((r for r in ladder if r.same), None)
        decisive = {"first_failing": original.trial_dir}
        if failing is None:
            # Every stock stage passes: the user's own backend is what breaks.
            v.failing_stage = original.user_backend or "user"
            v.last_passing_stage = ladder[-1].stage if ladder and ladder[-1].kind == "pass" else None
            v.message = f"every stock stage passes; the user's backend {v.failing_stage!r} fails"
            return self.finish(v, decisive=decisive)
        v.failing_stage = failing.stage
        idx = STAGES.index(failing.stage)
        v.last_passing_stage = STAGES[idx - 1]
        stage_outcome = self.stage_outcomes[failing.stage]
        decisive = {"first_failing": stage_outcome.trial_dir,
                    "last_passing": self.stage_outcomes[v.last_passing_stage].trial_dir}

        if failing.stage != "eager" and stage_outcome.graphs > 1:
            v.graph = self.which_graph(failing.stage, v.last_passing_stage, stage_outcome)
        elif failing.stage != "eager" and stage_outcome.graphs == 1:
            v.graph = 0
        if v.graph is not None:
            code_path = os.path.join(stage_outcome.trial_dir, "graphs", f"graph_{v.graph}.py")
            if os.path.exists(code_path):
                with open(code_path) as f:
                    v.graph_code = f.read()
        if o.configs and failing.stage in ("inductor", "aot_eager_decomp_partition"):
            v.config = self.config_flips(failing.stage, stage_outcome)
        if o.kind == "slow":
            v.speed = {"original": original.note}
            v.modes = self.modes(original)
            v.message = SLOW_STAGE_MEANING.get(failing.stage, "")
        elif o.subsystems and failing.stage in SUBSYSTEMS:
            v.subsystem = self.subsystem(failing.stage, stage_outcome)
        if o.kind == "failure" and failing.stage == "inductor" and original.user_backend == "inductor" and (
                trial_record(original.trial_dir).get("cuda") or (original.compile_args or {}).get("mode")):
            # On a GPU the mode decides CUDA graphs and autotuning: does the bug follow the mode?
            v.modes = self.modes(original)
        decisive["torch_logs"] = (original if stage_outcome is original else self.torch_logs(failing.stage)).trial_dir
        if stage_outcome.kind == "cuda_fault":
            v.cuda_fault = self.pin_cuda_fault(failing.stage, stage_outcome)
        return self.finish(v, decisive=decisive)

    def modes(self, original: Outcome) -> list:
        """--kind slow: the script under each torch.compile mode and dynamic setting, with its speed."""
        args = original.compile_args or {}
        variants = [{"mode": m} for m in (None, "reduce-overhead", "max-autotune") if m != args.get("mode")]
        variants += [{"dynamic": d} for d in (True, False) if d != args.get("dynamic")]
        outcomes = self.runner.map([self.spec("user", "mode-" + "-".join(f"{k}={v}" for k, v in c.items()),
                                              compile_overrides=c) for c in variants])
        rows = []
        for c, out in zip(variants, outcomes):
            if out is None:
                continue
            rows.append({"mode": c.get("mode", args.get("mode")), "dynamic": c.get("dynamic", args.get("dynamic")),
                         "kind": out.kind, "same": self.fails_same(out), "speed": out.note, "trial": out.trial_dir})
        self.emit("modes", rows=rows)
        return rows

    def pin_cuda_fault(self, stage: str, failing: Outcome) -> dict:
        """Kernel launches are asynchronous: re-run with CUDA_LAUNCH_BLOCKING=1 so the fault names its kernel."""
        import re

        out = self.runner(self.spec(stage, "cuda-launch-blocking", env={"CUDA_LAUNCH_BLOCKING": "1"}))
        text = out.traceback or ""
        try:
            with open(os.path.join(out.trial_dir, "stderr.txt"), errors="replace") as f:
                text += f.read()[-200_000:]
        except OSError:
            pass
        # Inductor's generated kernel names: triton_{poi,per,red,tem}_fused_<ops>_<n>, cpp_fused_<ops>_<n>.
        kernels = re.findall(r"\b(triton_(?:poi|per|red|tem|for)_\w+|cpp_fused_\w+)", text)
        return {"fault": failing.signature.message, "kernel": kernels[-1] if kernels else None,
                "trial": out.trial_dir, "same": self.fails_same(out),
                "device_check": out.device_check or failing.device_check}

    def torch_logs(self, stage: str) -> Outcome:
        """The failing trial once more with torch's own structured logs on, for the report's logs/."""
        return self.runner(self.spec(stage, "torch-logs", env=TORCH_LOGS_ENV))

    def finish(self, v: Verdict, decisive: dict) -> Verdict:
        v.decisive_trials = decisive
        v.other_failures = list(self.others.values())
        v.trials = self.runner.executed
        v.seconds = round(time.monotonic() - self.started, 2)
        return v

    # -- the stage ladder --------------------------------------------------------------------
    def ladder(self, original: Outcome) -> list[StageResult]:
        stages = list(STAGES[1:])
        self.stage_outcomes: dict[str, Outcome] = {}
        specs = []
        for stage in stages:
            if stage == "inductor" and original.user_backend == "inductor":
                # The original run *is* the inductor stage: same backend, mode and options.
                specs.append(None)
            else:
                specs.append(self.spec(stage, f"stage-{stage}"))
        self.emit("ladder_start", stages=stages)
        results = self.runner.map([s for s in specs if s is not None],
                                  stop=None)
        it = iter(results)
        out = []
        for stage, s in zip(stages, specs):
            outcome = original if s is None else next(it)
            self.stage_outcomes[stage] = outcome
            same = self.fails_same(outcome)
            out.append(StageResult(stage=stage, kind=outcome.kind, summary=outcome.signature.short(),
                                   seconds=outcome.seconds, same=same))
            self.emit("stage", stage=stage, outcome=outcome, same=same)
        self.stage_outcomes["none"] = self.runner(self.spec("none", "baseline-no-compile"))
        return out

    # -- which graph -------------------------------------------------------------------------
    def which_graph(self, stage: str, passing: str, failing: Outcome) -> Optional[int]:
        candidates = list(range(failing.graphs))[::-1]
        if failing.failed_graph is not None:
            candidates.remove(failing.failed_graph)
            candidates.insert(0, failing.failed_graph)
        for k in candidates:
            outcome = self.runner(self.spec(stage, f"graph-{k}", only_graph=k, other_stage=passing))
            if self.fails_same(outcome):
                self.emit("graph", graph=k, count=failing.graphs)
                return k
        return None

    # -- config flips ------------------------------------------------------------------------
    def config_flips(self, stage: str, failing: Outcome) -> Optional[dict]:
        state = trial_record(failing.trial_dir)
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
        if not flips:
            return None
        names = list(flips)
        specs = [self.spec(stage, f"config-{n}", config={n: flips[n]}) for n in names]
        outcomes = self.runner.map(specs)
        fixes = [n for n, out in zip(names, outcomes) if out is not None and out.kind == "pass"]
        self.emit("configs", tried=len(names), fixes=fixes)
        if fixes:
            return {n: flips[n] for n in fixes}
        everything = self.runner(self.spec(stage, "config-all", config=dict(flips)))
        if everything.kind != "pass":
            return None

        def still_passes(subset):
            if not subset:
                return False
            return self.runner(self.spec(stage, "config-set", config={n: flips[n] for n in subset})).kind == "pass"

        # ddmin looks for a minimal subset that *passes*.
        minimal = ddmin(names, still_passes)
        return {n: flips[n] for n in minimal}

    # -- counted subsystems --------------------------------------------------------------------
    def subsystem(self, stage: str, failing: Outcome) -> Optional[dict]:
        counts = failing.counters or {}
        # Subsystems torch never consulted cannot matter (cudagraphs on a CPU run): not asked about.
        names = [n for n in SUBSYSTEMS[stage] if counts.get(f"{stage}/{n}", 0) > 0]
        if not counts:
            names = [n for n in SUBSYSTEMS[stage] if n != "cudagraphs"]
        if not names:
            return None

        def spec_for(name, max_, attempt=0, label=None):
            return self.spec(stage, label or f"{name}-max{max_}", subsystem={"backend": stage, "name": name,
                                                                               "max": max_}, attempt=attempt)

        fixed = self.subsystems_that_fix(stage, names, spec_for)
        self.emit("subsystems", tried=names, fixes=fixed)
        if not fixed:
            return None
        # Torch's order: passes before lowerings. Turning every lowering off hides most codegen bugs,
        # so a pass that fixes it alone is the more specific answer.
        name = fixed[0]
        total = counts.get(f"{stage}/{name}")

        def fails(max_):
            return self.fails_same(self.runner(spec_for(name, max_)))

        # Without a count (the process died before saving it) probe exponentially for an upper bound.
        boundary = find_boundary(fails, lo=-1, hi=total - 1 if total else None, width=self.runner.jobs,
                                 fails_many=lambda points: [self.fails_same(x) for x in
                                                            self.runner.map([spec_for(name, p) for p in points])])
        if boundary is None:
            return None
        # Checked twice: a boundary that moves on a re-run is noise, not an answer.
        confirm = self.runner.map([spec_for(name, boundary, attempt=1), spec_for(name, boundary - 1, attempt=1)])
        stable = self.fails_same(confirm[0]) and confirm[1] is not None and confirm[1].kind == "pass"
        detail = self.runner(spec_for(name, boundary)).bisect_detail
        result = {"name": name, "application": boundary, "applications": total, "detail": detail,
                  "confirmed": stable}
        self.emit("subsystem", **result)
        return result

    def subsystems_that_fix(self, stage: str, names: list, spec_for) -> list:
        """The subsystems that, turned off alone, make the failure go away, in torch's order.

        All passes off at once rides in the same round as the last subsystem (lowerings) off: when passes-off
        still fails, no single pass is asked about, which saves a round for codegen bugs. When nothing fixes
        it, every subsystem is asked alone after all, in case turning passes off together hid one that helps.
        """

        def passed(out):
            return out is not None and out.kind == "pass"

        singles: dict = {}
        if len(names) > 2:
            group, last = names[:-1], names[-1]
            together = self.spec(stage, f"all-but-{last}-off", subsystem={"backend": stage, "names": group, "max": -1})
            first = self.runner.map([together, spec_for(last, -1, label=f"{last}-off")])
            singles[last] = passed(first[1])
            pending = list(group) if passed(first[0]) or not singles[last] else []
        else:
            pending = list(names)
        outcomes = self.runner.map([spec_for(n, -1, label=f"{n}-off") for n in pending])
        singles.update({n: passed(out) for n, out in zip(pending, outcomes)})
        return [n for n in names if singles.get(n)]


# Logging only: what torch compiled and why, in stderr and a TORCH_TRACE folder (tlparse reads it).
TORCH_LOGS_ENV = {"TORCH_LOGS": "graph_breaks,recompiles,aot_graphs,output_code", "TORCH_TRACE": "{trial_dir}/trace"}

SLOW_STAGE_MEANING = {
    "eager": "Dynamo alone (backend=eager) is already slower than eager: the cost is Dynamo's guards and frame "
             "evaluation or its graph breaks, not generated code; fewer, larger compiled regions help, a different "
             "backend will not",
    "aot_eager": "AOT autograd's tracing and runtime wrappers make it slower; Dynamo alone is not",
    "aot_eager_decomp_partition": "the decompositions or the partitioner make it slower; AOT autograd alone is not",
    "inductor": "inductor's generated code is slower than eager; the stages before it are not",
}


def _default_of(name: str, current, state: dict):
    """The default value of an inductor config entry the script changed, as recorded by the child."""
    return (state.get("config_defaults") or {}).get(name, None if not isinstance(current, bool) else not current)
