"""A bisect's pack reads its run folder's facts once (report/pack_facts.py), and every part renders from them alone."""

from __future__ import annotations

import os

from reprokit.data.rundir import RunDir
from reprokit.data.verdict import Verdict
from reprokit.report import keyed
from reprokit.report.pack_env import bisect_env_texts
from reprokit.report.pack_facts import gather
from reprokit.report.pack_files import run_files
from reprokit.report.pack_issue import issue_text

TOKEN = "hf_" + "QwErTyUiOpAsDfGhJkLzXcVbNm123456"


def bisected(tmp_path) -> tuple[RunDir, Verdict]:
    """A run folder as bisect leaves it (run.json, env.json, the keyed secrets, repro.py), and its verdict."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "train.py").write_text("print('train')\n")
    run = RunDir(str(tmp_path / "artifacts" / "run"))
    os.makedirs(run.path)
    command = f"reprokit bisect {project}/train.py --note-to {run.path}/note.txt"
    run.write_json("run.json", {"command": command, "environment": {"TORCH_LOGS": "+dynamo", "HF_TOKEN": TOKEN}})
    run.write_json("env.json", {"text": "collect_env says torch 2.13"})
    keyed.record(run.path, env={"HF_TOKEN": TOKEN}, identity={"home": "/home/alice", "user": "alice", "host": "gpu7"})
    run.write_text("repro.py", f"# Made by: {command}\nimport torch\nx = torch.ones(2)  # {project}/data\n")
    ladder = [{"stage": "inductor", "kind": "exception", "summary": "", "seconds": 1.0, "same": True}]
    signature = {"kind": "exception", "exc_type": "RuntimeError", "message": "boom"}
    v = Verdict.from_dict(
        {"script": f"{project}/train.py", "argv": ["--token", TOKEN], "failing_stage": "inductor", "kind": "exception"}
        | {"signature": signature, "ladder": ladder, "repro": f"{run.path}/repro.py", "repro_verified": False}
    )
    return run, v


def rendered(facts) -> tuple:
    files = run_files(facts, include_data=False)
    return bisect_env_texts(facts), files, issue_text(facts, files.repro, "It fails.", "p.tar.gz", None, False)


def test_every_part_renders_from_the_facts_alone(tmp_path):
    """Once gathered, no part reads run.json, env.json or the keyed secrets again: the same texts without them."""
    run, v = bisected(tmp_path)
    facts = gather(run, v)
    before = rendered(facts)
    for name in ("run.json", "env.json", keyed.RECORD_FILE, keyed.KEY_FILE):
        os.remove(run.file(name))
    assert rendered(facts) == before


def test_the_script_folder_is_named_first_and_every_part_says_it_so(tmp_path):
    """<project> wins over the run's own places in every portable form: repro.py's comments, the command, ISSUE.md;
    the recorded secret is withheld from env/ and scrubbed from ISSUE.md."""
    run, v = bisected(tmp_path)
    facts = gather(run, v)
    assert (str(tmp_path / "proj"), "<project>") in facts.places
    env, files, issue = rendered(facts)
    assert (
        files.repro
        == "# Made by: reprokit bisect <project>/train.py --note-to <run-dir>/note.txt\nimport torch\n"
        + (f"x = torch.ones(2)  # {tmp_path}/proj/data\n")
    )
    assert "`reprokit bisect <project>/train.py --note-to <run-dir>/note.txt`" in issue
    assert TOKEN not in issue and TOKEN not in env["env/environment.json"]
    assert '"HF_TOKEN": "<set, value withheld>"' in env["env/environment.json"]
