"""The whole genuine corpus as a user meets it (issues 49 and 50), run by hand, never in the suite: each case of
tests/real_bugs/ through `reprokit bisect CASE --json` with default flags, one at a time, and a table of what came
out against the case's EXPECT line.

    python bench/corpus.py -o /tmp/corpus                      # every case; a case already in the JSONL is skipped
    python bench/corpus.py -o /tmp/corpus tests/real_bugs/b_*.py
    python bench/corpus.py -o /tmp/corpus --table               # the markdown table of what is there
    python bench/corpus.py -o /tmp/corpus --reprokit-root TREE  # another tree of reprokit ("before")
    python bench/corpus.py -o /tmp/corpus --reach CASE=21 ...   # oracle calls until a case's reduction held 21 lines

Each row: the stage found against EXPECT's, the repro's kind, its size as the verdict counts it (nodes of a graph,
code lines of a source reduction), the code lines of repro.py itself (neither blank nor comment), whether it was
verified and its fresh-interpreter failure rate, the source candidates run compiled ("oracle calls"), and the
wall seconds of the whole command, pack included. A case whose bug is fixed in the installed torch says so.
"""

from __future__ import annotations

import argparse
import ast
import glob
import io
import json
import os
import shutil
import subprocess
import sys
import time
import tokenize

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(os.path.dirname(HERE), "tests", "real_bugs")
BISECT = "from reprokit.cli import main; main()"
LIMIT = 300  # seconds: issue 50's "each within 5 minutes in all"


def expect(path: str) -> dict:
    with open(path) as f:
        first = f.readline()
    return ast.literal_eval(first[len("# EXPECT = ") :])


def code_lines(text: str) -> int:
    """Lines holding code: not blank, not only a comment, not inside a docstring's continuation."""
    lines: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            continue
        if tok.type == tokenize.ENDMARKER:
            continue
        lines.update(range(tok.start[0], tok.end[0] + 1))
    return len(lines)


def run_case(case: str, out: str, root: str | None) -> dict:
    """One `reprokit bisect CASE --json` in a folder of its own, and what its verdict says."""
    name = os.path.basename(case)[:-3]
    folder = os.path.join(out, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    env = dict(os.environ)
    if root:
        env["PYTHONPATH"] = root
    started = time.monotonic()
    p = subprocess.run(
        [sys.executable, "-c", BISECT, "bisect", case, "--json", "-o", os.path.join(folder, "runs")],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.monotonic() - started
    with open(os.path.join(folder, "stderr.txt"), "w") as f:
        f.write(p.stderr)
    exp = expect(case)
    row: dict = {"case": name, "issue": exp.get("issue"), "rc": p.returncode, "seconds": round(wall, 1)}
    row["expected_stage"] = exp.get("failing_stage")
    try:
        data = json.loads(p.stdout)
    except ValueError:
        row["error"] = (p.stderr.strip().splitlines() or ["no output"])[-1][:200]
        return row
    row["stage"] = data.get("failing_stage")
    row["kind"] = data.get("kind")
    row["stage_right"] = row["stage"] == exp.get("failing_stage") and data.get("kind") in exp.get("kinds", ())
    row["repro_kind"] = data.get("repro_kind")
    row["repro_kind_expected"] = data.get("repro_kind") in exp.get("repro_kinds", ())
    nodes = data.get("nodes") or {}
    row["size"] = [nodes.get("original"), nodes.get("minified"), nodes.get("unit")]
    row["verified"] = data.get("repro_verified")
    row["reliability"] = data.get("repro_reliability")
    row["message"] = (data.get("message") or "")[:300]
    repro = data.get("repro")
    if repro and os.path.exists(repro):
        with open(repro) as f:
            row["repro_lines"] = code_lines(f.read())
    runs = glob.glob(os.path.join(folder, "runs", "*", "journal.jsonl"))
    if runs:
        labels = [json.loads(line).get("label") or "" for line in open(runs[0])]
        source = [x for x in labels if x.startswith("source-")]
        row["oracle_calls"] = sum(1 for x in source if not x.endswith("-no-compile"))
        row["trials"] = len(labels)
    return row


def calls_to_reach(folder: str, lines: int) -> tuple[int | None, int]:
    """(oracle calls until the reduction first held a candidate of at most `lines` non-blank lines, all its calls):
    how soon a reduction reaches another engine's size (issue 50 item 4: ddmin's, before)."""
    (run,) = glob.glob(os.path.join(folder, "runs", "*", ""))
    calls, reached = 0, None
    for line in open(os.path.join(run, "journal.jsonl")):
        entry = json.loads(line)
        label = entry.get("label") or ""
        if not label.startswith("source-"):
            continue
        if not label.endswith("-no-compile"):
            calls += 1
        elif entry["outcome"]["kind"] == "pass" and reached is None:  # a candidate that failed the same way
            with open(os.path.join(run, "candidates", os.path.basename(entry["spec"]["script"]))) as f:
                if sum(1 for x in f.read().splitlines() if x.strip()) <= lines:
                    reached = calls
    return reached, calls


def table(rows: list[dict]) -> str:
    head = (
        "| case | issue | stage (expected) | repro | size | repro.py code lines | verified (rate) | oracle calls "
        "| s |\n|---|---|---|---|---|---|---|---|---|\n"
    )
    body = []
    for r in rows:
        if "error" in r:
            body.append(f"| {r['case']} | #{r['issue']} | no verdict: {r['error']} | | | | | | {r['seconds']:.0f} |")
            continue
        stage = r["stage"] if r["stage_right"] else f"**{r['stage']}** ({r['expected_stage']})"
        size = r["size"]
        size_text = f"{size[0]} → {size[1]} {size[2] or 'nodes'}" if size[0] is not None else "-"
        rate = r.get("reliability") or {}
        rate_text = f" ({rate['failed']} of {rate['runs']})" if rate.get("runs") else ""
        secs = f"{r['seconds']:.0f}" + (" **over 5 min**" if r["seconds"] > LIMIT else "")
        body.append(
            f"| {r['case']} | #{r['issue']} | {stage} | {r['repro_kind'] or 'none'} | {size_text} "
            f"| {r.get('repro_lines', '-')} | {r['verified']}{rate_text} | {r.get('oracle_calls', '-')} | {secs} |"
        )
    return head + "\n".join(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*")
    parser.add_argument("-o", "--output-dir", required=True)
    parser.add_argument("--reprokit-root", help="a tree of reprokit to run instead of this one (git archive)")
    parser.add_argument("--table", action="store_true", help="print the table of the rows already there")
    parser.add_argument(
        "--reach",
        nargs="+",
        metavar="CASE=LINES",
        help="for each case already run, the oracle calls until its reduction first held at most LINES lines",
    )
    args = parser.parse_args()
    if args.reach:
        for spec in args.reach:
            name, lines = spec.rsplit("=", 1)
            reached, calls = calls_to_reach(os.path.join(args.output_dir, name), int(lines))
            print(json.dumps({"case": name, "lines": int(lines), "calls_to_reach": reached, "calls": calls}))
        return
    os.makedirs(args.output_dir, exist_ok=True)
    path = os.path.join(args.output_dir, "rows.jsonl")
    rows = [json.loads(line) for line in open(path)] if os.path.exists(path) else []
    if args.table:
        print(table(sorted(rows, key=lambda r: r["case"])))
        return
    done = {r["case"] for r in rows}
    cases = args.cases or sorted(glob.glob(os.path.join(CASES, "*.py")))
    for case in cases:
        name = os.path.basename(case)[:-3]
        if name in done:
            continue
        row = run_case(os.path.abspath(case), args.output_dir, args.reprokit_root)
        with open(path, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
