"""The bisect use case: which stage, graph, config flip and subsystem application breaks a script.

Each step lives in a module of its own (start, ladder, graph, configs, subsystems, speed, cuda); this one
runs them in order, each taking the frozen Isolation so far and returning it with what it found
(dataclasses.replace), and returns the last one.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import time
from collections.abc import Callable

from reprokit.bisect.configs import config_flips, flips_asked
from reprokit.bisect.cuda import launch_blocking
from reprokit.bisect.findings import dynamo_message, memory_finding, meta_kernel_finding, pieces_finding, say
from reprokit.bisect.graph import failing_graph, graph_code
from reprokit.bisect.ladder import meta_mismatch, previous_stage, run_ladder
from reprokit.bisect.numerics import ask_numerics, first_divergence, is_accuracy
from reprokit.bisect.plain import plain_verdict
from reprokit.bisect.saved_graph import adopt_saved_graph, confirm_graph, graph_ladder
from reprokit.bisect.session import TORCH_LOGS_ENV, BisectOptions, Emit, Session
from reprokit.bisect.speed import SLOW_STAGE_MEANING, SpeedJudge, modes
from reprokit.bisect.start import record_original, reference_run, start_round
from reprokit.bisect.steady import contradicting, count_same, more_runs
from reprokit.bisect.subsystems import confirm_boundary, subsystem
from reprokit.bisect.warm import warm_ladder
from reprokit.data.events import Event
from reprokit.data.kinds import OutcomeKind
from reprokit.data.phases import Evidence, Isolation
from reprokit.data.rate import rate_line
from reprokit.data.records import Outcome, StageResult
from reprokit.data.stages import CONFIG_STAGES, CROSSREF, STAGES, SUBSYSTEMS
from reprokit.data.trial_files import trial_record
from reprokit.data.warm_cache import describe as describe_warm
from reprokit.trial.repeat import MAX_TRIES, too_rare, tries_for
from reprokit.trial.runner import Runner

RATE_RUNS = 3  # runs of the script that tell a flaky failure from a ladder that holds, when a stage contradicts it

__all__ = ["BisectOptions", "Bisector", "Deployment", "TORCH_LOGS_ENV", "SLOW_STAGE_MEANING"]

# The deployment path's isolation (export/, which builds on bisect/ and so is handed in by the app): given the
# session, the isolation so far and the original run, (the isolation, its decisive trials) when the original failed
# on that path, else None.
Deployment = Callable[[Session, Isolation, Outcome], tuple[Isolation, dict] | None]


def _no_deployment(_s: Session, _found: Isolation, _original: Outcome) -> tuple[Isolation, dict] | None:
    return None


def deferring(found: Isolation, *asked: str) -> Isolation:
    """The isolation with `asked` added to what is asked after the repro (Bisector.after_repro)."""
    return dataclasses.replace(found, deferred=(*found.deferred, *asked))


def rungs(ladder: list) -> tuple:
    """The ladder as the isolation holds it: each stage's result as plain data."""
    return tuple(dataclasses.asdict(r) for r in ladder)


def user_backend_fails(found: Isolation, ladder: list, user_backend: str | None) -> Isolation:
    """Every stock stage passes: the user's own backend is what breaks, after the last stage when it passed."""
    stage = user_backend or "user"
    return dataclasses.replace(
        found,
        failing_stage=stage,
        last_passing_stage=ladder[-1].stage if ladder and ladder[-1].kind == OutcomeKind.PASS else None,
        message="; ".join(
            x for x in (f"every stock stage passes; the user's backend {stage!r} fails", found.message) if x
        ),
    )


class Bisector(Session):
    """Asks the questions of a bisect run; every answer is a trial run by `runner`."""

    def __init__(self, opts: BisectOptions, runner: Runner, emit: Emit, deployment: Deployment = _no_deployment):
        super().__init__(opts, runner, emit)
        self.deployment = deployment
        if opts.kind == "slow":
            self.use_policy(judge=SpeedJudge(opts.slow_threshold))

    def isolate(self) -> Isolation:
        """The whole bisect up to the verdict: original checks, stage ladder, then graph, configs, subsystems."""
        o = self.opts
        baseline, originals = start_round(self)
        found = Isolation(script=o.script, argv=tuple(o.argv), hang_limit=self.hang_limit)
        original = self.original = reference_run(self, baseline, originals)
        originals = [*originals, *self.reruns]  # a failure the first run missed: every run counts to its rate
        found, fails = record_original(self, found, original, originals, baseline)
        if self.warm_cache is not None:
            return self.finish(self.warm_only(found), decisive={"first_failing": original.trial_dir})
        if self.plain is not None:  # only the script run as written fails: reprokit's router hides it
            return self.finish(*plain_verdict(self, found, original))
        if fails < len(originals):
            found, steady = self.ask_until_it_fails(found, fails, len(originals))
            if not steady:
                return self.finish(found, decisive={"first_failing": original.trial_dir})

        if original.kind == OutcomeKind.CUDA_FAULT:  # every launch synchronous from here: the fault names its kernel
            found, original = launch_blocking(self, found, original)
            self.original = original
        deployed = self.deployment(self, found, original)  # torch.export and AOTInductor (issue #20)
        if deployed is not None:
            return self.finish(*deployed)
        if original.kind == OutcomeKind.SKIP:
            found = memory_finding(found, original, baseline)
        found, ladder = self.ladder(found, original, originals)
        if ladder is None:  # flaky, and too rare to ask each question until it fails
            return self.finish(found, decisive={"first_failing": original.trial_dir})
        found, failing = self.first_failing(pieces_finding(found, original), ladder, original)
        if failing is None:
            found = user_backend_fails(found, ladder, original.user_backend)
            return self.finish(found, decisive={"first_failing": original.trial_dir})
        return self.in_stage(found, failing, original)

    def warm_only(self, found: Isolation) -> Isolation:
        """It fails only with inductor's caches on. The stages and counters run with the caches off, where the
        script passes: nothing more to ask of them."""
        assert self.warm_cache is not None  # the cache runs found it
        return dataclasses.replace(
            found,
            failing_stage="inductor",
            warm_cache=self.warm_cache,
            repro_rate=1.0,  # the originals ran with the caches off: the warm run is the one
            repro_runs=1,
            ladder=rungs(warm_ladder(self.warm_cache_runs, self.target)),
            message="; ".join(x for x in (describe_warm(self.warm_cache), found.message) if x),
        )

    def in_stage(self, found: Isolation, failing: StageResult, original: Outcome) -> Isolation:
        """A stock stage fails: the isolation with it and the one before, narrowed within it, and finished with
        the decisive trials."""
        passing = previous_stage(self, failing.stage)
        found = dataclasses.replace(found, failing_stage=failing.stage, last_passing_stage=passing)
        stage_outcome = self.stage_outcomes[failing.stage]
        # The saved graph answered the ladder under the user's own inductor: the script's failing run is the
        # original itself, whose output, sources and torch logs the report packs.
        script_run = original if self.ladder_from_graph and failing.stage == "inductor" else stage_outcome
        decisive = {"first_failing": script_run.trial_dir, "last_passing": self.stage_outcomes[passing].trial_dir}
        found = self.narrow(found, original, stage_outcome)
        # Dynamo failing before any graph reached a backend did so in the original as in its own stage: the
        # original's logs tell it (a hang would cost a whole timeout more).
        in_dynamo = failing.stage == "eager" and dynamo_message(original) is not None
        if script_run is original or in_dynamo:
            decisive["torch_logs"] = original.trial_dir
        else:  # the report's logs, not the verdict's: asked after the repro (after_repro)
            found = deferring(found, "torch_logs")
        return self.finish(found, decisive=decisive)

    def ladder(self, found: Isolation, original: Outcome, originals: list) -> tuple[Isolation, list | None]:
        """The stage ladder: of the graph the original saved as it raised when it fails alone, else of the script;
        asked again, each stage until the failure shows, when a stage contradicts it and the script proves flaky;
        None when it is flaky too rarely for that. Beside it, the isolation with the ladder."""
        ladder = graph_ladder(self, original) or run_ladder(self, original)
        found = dataclasses.replace(found, ladder=rungs(ladder))
        odd = contradicting(ladder, original.user_backend) if not found.flaky else None
        if odd is None:
            return found, ladder
        found, steady = self.flaky_after_all(found, originals, odd)
        if not steady:
            return found, None if found.flaky else ladder
        ladder = (graph_ladder(self, original) if self.ladder_from_graph else None) or run_ladder(self, original)
        return dataclasses.replace(found, ladder=rungs(ladder)), ladder

    def flaky_after_all(self, found: Isolation, originals: list, odd: str) -> tuple[Isolation, bool]:
        """A stage passed where the ladder says it should fail (`odd`): the script as written runs RATE_RUNS more
        times. When one passes, the failure is flaky: every later question is asked until it fails (True). When
        all fail, the ladder's answer stands."""
        runs = [*(x for x in originals if x is not None), *more_runs(self, "original-rate", 200, RATE_RUNS)]
        fails = count_same(self.target, runs)
        if fails == len(runs):
            self.emit(
                Event.NOTE,
                text=f"stage {odd} passes where the ladder says it should fail; the script failed "
                f"{fails} of {fails} runs as written: the ladder's answer stands",
            )
            return found, False
        return self.ask_until_it_fails(
            found, fails, len(runs), why=f"stage {odd} passed where the ladder says it should fail"
        )

    def ask_until_it_fails(self, found: Isolation, fails: int, runs: int, why: str = "") -> tuple[Isolation, bool]:
        """A flaky failure, measured at `fails` of `runs`: from here on each question is asked until it fails that
        way or has passed often enough that a chance pass is unlikely (trial/repeat.py); True when it can be
        bisected so, False (with the isolation's message) when it is too rare for that."""
        rate = fails / runs
        found = dataclasses.replace(found, flaky=True, repro_rate=rate, repro_runs=runs)
        tries = tries_for(rate)
        if too_rare(rate):
            message = (
                f"flaky: the original {rate_line(fails, runs)}; too rare to bisect run by run (a question "
                f"would need more than {MAX_TRIES} runs)"
            )
            return dataclasses.replace(found, message=message), False
        assert self.target is not None  # the rate measured is of the original's failure
        self.use_policy(tries=tries, target=self.target)
        message = (
            f"flaky: the original {rate_line(fails, runs)}{'; ' + why if why else ''}; each question was "
            f"asked up to {tries} times: it fails at the first run that fails that way, and passes after "
            f"{tries} that do not"
        )
        self.emit(Event.NOTE, text=message)
        return dataclasses.replace(found, flaky_tries=tries, message=message), True

    def after_repro(self, isolation: Isolation, case: str | None = None) -> Evidence:
        """Ask what the verdict did not need and the report wants (isolation.deferred), side by side: the re-run of
        the subsystem boundary, the config flips once an application named the cause (they only add a
        workaround), the failing stage's torch logs, and of wrong numbers the numerics modes and the first diverging
        node of the failing graph (`case`, the folder minify captured it in). Run after the repro is written: none
        delays the verdict or the repro."""
        asked = tuple(isolation.deferred)
        if not asked:
            return Evidence()
        self.emit(Event.PHASE, name="evidence")
        started, executed = time.monotonic(), self.runner.executed
        stage, found = isolation.failing_stage, isolation.subsystem
        assert stage is not None  # a stage failed: else nothing was deferred
        config = confirmed = torch_logs = None
        with cf.ThreadPoolExecutor(max_workers=3) as pool:
            logs = pool.submit(self.torch_logs, stage) if "torch_logs" in asked else None
            whole = pool.submit(confirm_graph, self, isolation) if "graph_confirm" in asked else None
            stable = pool.submit(confirm_boundary, self, stage, found) if "confirm" in asked and found else None
            if "configs" in asked:
                # the time plan may leave the search to a run given --budget
                search = "config_set" in asked
                failing = self.stage_outcomes[stage]
                config, left = flips_asked(self, stage, failing, self.likely_flips(isolation), search)
                asked += ("config_set",) if not (search or left) else ()  # the first round settled it
            if stable is not None:
                confirmed = stable.result()
                if not confirmed and found is not None:
                    self.emit(
                        Event.NOTE,
                        text=f"{found['name']} application #{found['application']}: "
                        "the boundary did not hold on a re-run (a flaky failure?)",
                    )
            numerics, divergence = self.numbers_asked(isolation, asked, case)
            if logs is not None:
                torch_logs = logs.result().trial_dir
            graph_confirmed = whole.result() if whole is not None else None
        return Evidence(
            asked=asked,
            config=config,
            confirmed=confirmed,
            torch_logs=torch_logs,
            numerics=numerics,
            divergence=divergence,
            graph_confirmed=graph_confirmed,
            trials=self.runner.executed - executed,
            seconds=round(time.monotonic() - started, 2),
        )

    def likely_flips(self, found: Isolation) -> tuple:
        """The flips asked alone in the first round: of wrong numbers, the one that gives eager's precision back."""
        return ("emulate_precision_casts",) if is_accuracy(found.signature, self.opts.check_accuracy) else ()

    def numbers_asked(self, isolation: Isolation, asked: tuple, case: str | None) -> tuple:
        """(numerics modes' finding, first diverging node) of wrong numbers, each None when not asked."""
        stage = isolation.failing_stage
        assert stage is not None  # a stage failed: else nothing was deferred
        numerics = ask_numerics(self, stage, self.stage_outcomes[stage]) if "numerics" in asked else None
        divergence = None
        if "divergence" in asked:
            divergence = first_divergence(self, stage, case or isolation.graph_case, isolation.subsystem)
        return numerics, divergence

    def first_failing(self, found: Isolation, ladder: list, original: Outcome) -> tuple[Isolation, StageResult | None]:
        """The first stage that fails the same way; or crossref, when its own check fails before that (a wrong
        fake kernel, which the compiled run's failure most likely follows from). Beside it, the isolation with
        what that says."""
        failing = next((r for r in ladder if r.same), None)
        meta = meta_mismatch(self, ladder)
        if meta is not None and (failing is None or STAGES.index(meta.stage) < STAGES.index(failing.stage)):
            return meta_kernel_finding(self, found, original), meta
        if failing is not None and failing.stage == CROSSREF:
            found = say(found, "the crossref stage fails first: a fake (meta) kernel disagrees with its real kernel")
        elif failing is not None and failing.stage == "eager" and (message := dynamo_message(original)):
            found = say(found, message)
        return found, failing

    def narrow(self, found: Isolation, original: Outcome, failing: Outcome) -> Isolation:
        """Within the failing stage: which graph, which config flips, which subsystem, which compile modes."""
        o, stage, passing = self.opts, found.failing_stage, found.last_passing_stage
        assert stage is not None and passing is not None  # set from the ladder just before
        self.emit(Event.PHASE, name="graph")
        # The original saved the graph that raised: when it fails alone the same way, it is the failing graph, and
        # the stage's later questions are asked of it (graph trials, counted in that graph alone).
        alone = None
        if found.memory is None:
            found, alone = adopt_saved_graph(self, found, original, stage)
        if alone is not None and self.graph_accuracy:
            found = deferring(found, "graph_confirm")  # the script with that graph alone compiled: after the repro
        graph = found.graph if alone is not None else failing_graph(self, stage, passing, failing)
        if graph is not None:
            code = graph_code(failing, graph) or graph_code(original, graph)
            found = dataclasses.replace(found, graph=graph, graph_code=found.graph_code if code is None else code)
        if found.memory is not None:
            return found  # config flips and counted passes are about failures, not the memory a program needs
        configs = o.configs and stage in CONFIG_STAGES
        if o.kind == "slow":
            return self.slow_stage(found, original, failing, configs)
        if o.subsystems and stage in SUBSYSTEMS:
            self.emit(Event.PHASE, name="subsystems")
            # The boundary's re-run checks the answer, it does not change it: asked after the repro.
            found = dataclasses.replace(found, subsystem=subsystem(self, stage, alone or failing, confirm=False))
            if found.subsystem:
                found = deferring(found, "confirm")
        if configs and found.subsystem:
            # The application found is the cause; a flip that avoids it is a workaround for the report,
            # asked after the repro (after_repro) instead of delaying the verdict by a full compile or more.
            found = deferring(found, "configs", "config_set")
        elif configs:
            self.emit(Event.PHASE, name="configs")
            found = dataclasses.replace(found, config=config_flips(self, stage, failing, self.likely_flips(found)))
        if o.kind == "failure" and stage == "inductor" and is_accuracy(found.signature, o.check_accuracy):
            # Wrong numbers: numerics-only or a wrong kernel (config trials: --no-configs skips them), and where in
            # the graph (beside the counters: --no-subsystems skips it); after the repro: neither changes the verdict
            found = deferring(found, *(["numerics"] if o.configs else []), *(["divergence"] if o.subsystems else []))
        if o.kind == "failure" and stage == "inductor" and _mode_matters(original):
            # On a GPU the mode decides CUDA graphs and autotuning: does the bug follow the mode?
            self.emit(Event.PHASE, name="modes")
            found = dataclasses.replace(found, modes=modes(self, original))
        return found

    def slow_stage(self, found: Isolation, original: Outcome, failing: Outcome, configs: bool) -> Isolation:
        """--kind slow, within the stage that is slow: the config flips that speed it up, and each compile mode."""
        stage = found.failing_stage
        assert stage is not None  # set from the ladder
        self.emit(Event.PHASE, name="configs")
        config = config_flips(self, stage, failing) if configs else None
        self.emit(Event.PHASE, name="modes")
        return dataclasses.replace(
            found,
            config=config,
            speed={"original": original.note},
            modes=modes(self, original),
            message=SLOW_STAGE_MEANING.get(stage, ""),
        )


def _mode_matters(original: Outcome) -> bool:
    """The user compiled with inductor, and on a GPU or with an explicit mode."""
    return original.user_backend == "inductor" and bool(
        trial_record(original.trial_dir).get("cuda") or (original.compile_args or {}).get("mode")
    )
