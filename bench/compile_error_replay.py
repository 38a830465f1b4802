"""Trials that meet a kernel which failed to compile earlier in the run: replayed (the default) against compiled
again (REPROKIT_REPLAY_COMPILE_ERRORS=0), alternately, on the genuine C++ compile errors of the corpus.

    python bench/compile_error_replay.py [PYTHON] [OUT]

Per case and round, one `reprokit bisect CASE --no-pack` each way. Printed: the whole runs' seconds, and for each
trial that replayed an error, its seconds beside the same trial (same label, once in each run) compiled again.
"""

import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = ("b_jacfwd_half_reduction_cpp_error", "d_half_bool_sum_cpp_error")


def trials(run: str) -> dict:
    """{label: [(seconds, replays)]} of a run folder's trials."""
    out: dict = {}
    for d in glob.glob(os.path.join(run, "trials", "*")):
        path = os.path.join(d, "result.json")
        if os.path.exists(path):
            with open(path) as f:
                r = json.load(f)
            out.setdefault(os.path.basename(d).rsplit("-", 1)[0], []).append(
                (r.get("seconds") or 0.0, len(r.get("compile_errors_replayed") or []))
            )
    return out


def main() -> None:
    python = sys.argv[1] if len(sys.argv) > 1 else sys.executable
    out = sys.argv[2] if len(sys.argv) > 2 else "/tmp/compile-error-replay"
    shutil.rmtree(out, ignore_errors=True)
    pairs = []
    for round_ in (1, 2):
        for case in CASES:
            runs = {}
            for way, value in (("replay", "1"), ("compile", "0")):
                folder = os.path.join(out, f"{way}-{round_}")
                os.makedirs(folder, exist_ok=True)
                shutil.copy(os.path.join(HERE, "tests", "real_bugs", case + ".py"), folder)
                env = {**os.environ, "PYTHONPATH": HERE, "REPROKIT_REPLAY_COMPILE_ERRORS": value}
                started = time.monotonic()
                subprocess.run(
                    [python, "-m", "reprokit", "bisect", case + ".py", "--no-pack", "--json", "-o", "art"],
                    cwd=folder,
                    env=env,
                    capture_output=True,
                )
                print(f"{case} {way} round {round_}: {time.monotonic() - started:.1f} s", flush=True)
                runs[way] = trials(glob.glob(os.path.join(folder, "art", f"*{case}"))[0])
            for label, done in runs["replay"].items():
                again = runs["compile"].get(label, [])
                if len(done) == 1 and done[0][1] and len(again) == 1:
                    pairs.append((again[0][0], done[0][0]))
    if pairs:
        print(
            f"{len(pairs)} trials replayed an error: {statistics.mean(p[0] for p in pairs):.2f} s compiled again, "
            f"{statistics.mean(p[1] for p in pairs):.2f} s replayed (mean)"
        )


if __name__ == "__main__":
    main()
