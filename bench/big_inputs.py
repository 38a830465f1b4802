"""Issue 48's benchmark of a capture's cost on big inputs: bench/big_inputs_job.py (a failing graph over at least
1 GiB of inputs) run once plainly, then captured three ways (the default caps: the activations replaced by
stand-ins; --keep-inputs-on-disk; --max-input-bytes 0), and each capture bisected offline. Prints per way the job's
wall time and peak resident memory against the plain run, the case folder's size, what the capture kept, and the
offline answer (stage, lowering, repro, runs of the job, the replay's peak CUDA memory). With --job long:
bench/long_job.py (training, then a late relu compile error) on the device, captured with --max-input-bytes 0
and bisected offline to a verified repro.py.

    python bench/big_inputs.py [--device cuda|cpu] [--gib 1] [--minify]    (from the repository root)
    python bench/big_inputs.py --job long --device cuda --ways="--max-input-bytes 0" --minify"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WAYS = {
    "default caps": [],
    "--keep-inputs-on-disk": ["--keep-inputs-on-disk"],
    "--max-input-bytes 0": ["--max-input-bytes", "0"],
}


def timed(cmd: list, work: str, env: dict, name: str) -> tuple:
    """(wall seconds, peak resident MiB of the command and its children, exit status) by /usr/bin/time."""
    out = os.path.join(work, f"{name}.time")
    with open(os.path.join(work, f"{name}.log"), "w") as log:
        rc = subprocess.call(
            ["/usr/bin/time", "-f", "%e %M", "-o", out, *cmd], cwd=work, env=env, stdout=log, stderr=log
        )
    wall, rss = open(out).read().split()[-2:]
    return float(wall), int(rss) / 1024, rc


def folder_mib(path: str) -> float:
    return (
        sum(os.path.getsize(p) for p in glob.glob(os.path.join(path, "**"), recursive=True) if os.path.isfile(p))
        / 2**20
    )


def offline(work: str, cap: str, env: dict, minify: bool) -> dict:
    """bisect --from-capture's answer, its seconds, the job's runs in its journal and the replay's peak memory."""
    art = cap + "-art"
    flags = [] if minify else ["--no-minify", "--no-pack"]
    cmd = [sys.executable, "-m", "reprokit", "bisect", "--from-capture", cap, "--json", "-o", art, *flags]
    p = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
    try:
        v = json.loads(p.stdout)
    except ValueError:
        return {"answer": f"exit {p.returncode}: {(p.stderr.strip().splitlines() or [''])[-1][:160]}"}
    journal = [json.loads(line) for line in open(os.path.join(v["run_dir"], "journal.jsonl"))]
    runs = sum(1 for r in journal if r["kind"] == "script" and os.path.basename(r["spec"]["script"]) != "repro.py")
    peaks = [
        json.load(open(f)).get("peak_memory") or {}
        for f in glob.glob(os.path.join(v["run_dir"], "**", "result.json"), recursive=True)
    ]
    sub = v.get("subsystem") or {}
    return {
        "answer": f"{v.get('failing_stage')} / {sub.get('name', '-')}: {(sub.get('detail') or '-')[:50]}",
        "repro": "verified" if v.get("repro_verified") else ("not asked" if not minify else "unverified"),
        "seconds": v["seconds"] + (v.get("minify_seconds") or 0),
        "job_runs": runs,
        "cuda_mib": max((p.get("cuda_mib", 0.0) for p in peaks), default=0.0),
        "trial_rss_mib": max((p.get("rss_mib", 0.0) for p in peaks), default=0.0),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default=None, help="cuda where there is one, else cpu")
    ap.add_argument("--gib", default="1", help="GiB of activations in the failing graph")
    ap.add_argument("--minify", action="store_true", help="also minify to a verified repro.py (slow on 1 GiB)")
    ap.add_argument("--ways", default=",".join(WAYS), help="which captures, comma-separated")
    ap.add_argument("--job", choices=["big", "long"], default="big", help="long: bench/long_job.py instead")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix=f"{a.job}-inputs-")
    script = "big_inputs_job.py" if a.job == "big" else "long_job.py"
    shutil.copy(os.path.join(HERE, script), work)
    device = {"BIG_INPUT_DEVICE": a.device, "LONG_JOB_DEVICE": a.device} if a.device else {}
    env = {**os.environ, "BIG_INPUT_GIB": a.gib, **device}
    job = [sys.executable, script]
    wall0, rss0, rc0 = timed(job, work, env, "plain")
    print(
        f"plain run: {wall0:.1f} s, peak RSS {rss0:.0f} MiB, exit {rc0}: {open(os.path.join(work, 'plain.log')).read().splitlines()[0]}"
    )
    print(
        "| capture | job s | x plain | peak RSS MiB | case MiB | kept / on disk / replaced | offline answer | repro | offline s | runs of the job | replay peak CUDA MiB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in a.ways.split(","):
        cap = os.path.join(work, "cap-" + name.strip("-").replace(" ", "-"))
        cmd = [sys.executable, "-m", "reprokit", "capture", "-o", cap, *WAYS[name], "--", *job]
        wall, rss, _ = timed(cmd, work, env, os.path.basename(cap))
        failure = json.load(open(os.path.join(cap, "rank0", "failure.json")))
        ins = failure.get("inputs") or {}
        kept = f"{ins.get('kept')} / {ins.get('on_disk')} / {ins.get('replaced')}"
        o = offline(work, cap, env, a.minify)
        print(
            f"| {name} | {wall:.1f} | {wall / wall0:.2f} | {rss:.0f} | {folder_mib(os.path.join(cap, 'rank0')):.0f} | {kept} | "
            f"{o['answer']} | {o.get('repro', '-')} | {o.get('seconds', 0):.0f} | {o.get('job_runs', '-')} | {o.get('cuda_mib', '-')} |",
            flush=True,
        )
    print(f"folders under {work}")


if __name__ == "__main__":
    main()
