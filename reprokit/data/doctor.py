"""What reprokit doctor found: findings with fixes, the speed comparison, the whole report (plain data)."""

from __future__ import annotations

from dataclasses import dataclass, field

from reprokit.data.jsondata import JsonData


@dataclass(frozen=True)
class Finding(JsonData):
    """One thing that costs the user speed, where it is in their code, and what to change."""

    kind: str  # graph_break | recompile | recompile_limit | fallback | compiled_failure | speed
    title: str
    file: str | None = None
    line: int | None = None
    code: str = ""
    count: int = 1
    detail: str = ""
    fix: str = ""
    owner: str = "user"  # "user": fix it in the script; "compiler": a torch.compile limitation worth an issue


@dataclass
class Speed(JsonData):
    eager_step_seconds: float | None = None
    compiled_step_seconds: float | None = None
    speedup: float | None = None
    steps_timed: int = 0
    compile_seconds: float = 0.0
    verdict: str = ""


@dataclass
class DoctorReport(JsonData):
    script: str
    argv: tuple = ()
    findings: list = field(default_factory=list)
    speed: dict = field(default_factory=dict)
    graphs: int = 0
    frames: dict = field(default_factory=dict)
    compile_sites: list = field(default_factory=list)
    compiled_outcome: str = "pass"
    trials: dict = field(default_factory=dict)
    run_dir: str | None = None
    tarball: str | None = None
    # torch records doctor could not attach to ("graph-break", "compile-metrics"): what they show was not seen
    unobserved: list = field(default_factory=list)

    def compiler_findings(self) -> list:
        return [f for f in self.findings if f["owner"] == "compiler"]
