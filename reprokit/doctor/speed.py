"""reprokit doctor's speed verdict: compiled against eager, call by call, and the finding when compiling does not pay."""

from __future__ import annotations

import statistics

from reprokit.data.doctor import Finding, Speed

# Under this gain compiling is not worth its compile time and risk (the seed guidance's 5% rule).
WORTH_IT = 1.05


def measure_speed(eager: dict, compiled: dict) -> Speed:
    """Median eager vs compiled seconds per call of each compiled callable, matched call by call between the
    two runs. Warm-up is left out: the first call, any call that compiled, and the call right after one."""
    pairs = []
    for ce, cc in zip(eager.get("callables") or [], compiled.get("callables") or []):
        compiled_flags = cc["compiled"]
        for i, (te, tc) in enumerate(zip(ce["seconds"], cc["seconds"])):
            if i == 0 or compiled_flags[i] or compiled_flags[i - 1]:
                continue
            pairs.append((te, tc))
    compile_s = sum(m.get("entire_frame_compile_time_s") or 0.0 for m in compiled.get("metrics") or [])
    s = Speed(compile_seconds=round(compile_s, 3), steps_timed=len(pairs))
    if not pairs:
        s.verdict = "not measured: the compiled callables ran too few times after warm-up; run more steps"
        return s
    s.eager_step_seconds = statistics.median(p[0] for p in pairs)
    s.compiled_step_seconds = statistics.median(p[1] for p in pairs)
    # Medians, not sums: one call slowed by the machine must not decide the verdict.
    ratio = s.eager_step_seconds / s.compiled_step_seconds if s.compiled_step_seconds > 0 else None
    # A step of microseconds against a compiled one of milliseconds rounds to 0.000 (CI at 647d4da divided by it).
    s.speedup = speedup = (round(ratio, 3) or float(f"{ratio:.3g}")) if ratio is not None else None
    if not ratio or speedup is None:
        s.verdict = "not measured: a step took no measurable time"
    elif ratio < 1.0:
        s.verdict = f"compiled is {1 / ratio:.2f}x slower than eager: compiling is not worth it here"
    elif speedup < WORTH_IT:
        s.verdict = f"compiled is only {s.speedup:.2f}x eager (under 5% gain): compiling is not worth it here"
    else:
        s.verdict = f"compiled is {s.speedup:.2f}x faster than eager"
    return s


def speed_findings(speed, findings: list, sites: list) -> list:
    """A compiled run slower than eager is a finding: the user's to fix when other findings explain it."""
    if speed.speedup is None or speed.speedup >= WORTH_IT:
        return []
    causes = [f for f in findings if f.kind != "compiled_failure"]
    owner = "user" if causes else "compiler"
    fix = (
        "fix the findings above first (each break or recompile costs time), then measure again"
        if causes
        else 'keep this code eager (drop torch.compile here), or try `mode="max-autotune"`; with no graph break '
        "or recompile, the slowdown is torch.compile's own: worth an issue with `reprokit issue`"
    )
    site = sites[0] if sites else {"file": None, "line": None}
    return [
        Finding(
            kind="speed",
            title=speed.verdict,
            file=site["file"],
            line=site["line"],
            owner=owner,
            fix=fix,
            detail=f"eager {(speed.eager_step_seconds or 0.0) * 1e3:.3f} ms/call, compiled "
            f"{(speed.compiled_step_seconds or 0.0) * 1e3:.3f} ms/call over {speed.steps_timed} "
            f"calls; compile {speed.compile_seconds:.1f} s",
        )
    ]
