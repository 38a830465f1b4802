"""The tarball from a real bisect run inside a real git repository, with secrets planted everywhere."""

import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile

import pytest

CASES = pathlib.Path(__file__).parent / "cases"
REPO = pathlib.Path(__file__).parent.parent

SECRETS = {
    # name contains TORCH and TOKEN, value matches no pattern: only name-based redaction can catch it
    "TORCH_PRIVATE_TOKEN": "plain-value-nobody-could-guess-4711",
    # allowlisted name with no secret word, value is a GitHub token: only the pattern can catch it
    "TORCHINDUCTOR_DEBUG_NOTE": "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa9",
    "HF_TOKEN": "hf_" + "QwErTyUiOpAsDfGhJkLzXcVbNm123456",
    "OPENAI_API_KEY": "sk-" + "live-0123456789abcdefghijkl",
}
ARG_SECRET = "argtoken-5555-secret"
REMOTE_TOKEN = "ghp_" + "RemoteRemoteRemoteRemoteRemote123456"
DIFF_SECRET = "AKIA" + "ZZZZYYYYXXXXWWWW"


def git(cwd, *args):
    subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
        },
    )


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    work = tmp_path_factory.mktemp("gitproj")
    shutil.copy(CASES / "_blocks.py", work / "_blocks.py")
    body = (
        "import os, sys\n"
        "import torch\n"
        "from _blocks import model\n\n"
        "lr = float(open('cfg.txt').read())\n"
        "print('token is', os.environ['TORCH_PRIVATE_TOKEN'], os.environ['HF_TOKEN'], sys.argv)\n"
        "torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = 'compile_error'\n"
        "out = torch.compile(model())(torch.randn(4, 16))\n"
    )
    (work / "train.py").write_text(body)
    (work / "cfg.txt").write_text("0.1\n")
    (work / "notes.md").write_text("private notes\n")
    git(work, "init", "-q", "-b", "main")
    git(work, "remote", "add", "origin", f"https://alice:{REMOTE_TOKEN}@github.com/org/proj.git")
    git(work, "add", ".")
    git(work, "commit", "-qm", "init")
    (work / "train.py").write_text(body + f"# aws_key = '{DIFF_SECRET}'\n")  # a dirty change with a secret
    (work / "cfg.txt").write_text("0.2\n")  # read by the script: its diff is packed
    (work / "notes.md").write_text("unrelated draft\n")  # neither imported nor read: its name only
    env = {**os.environ, **SECRETS, "PYTHONPATH": str(REPO)}
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprokit",
            "bisect",
            "train.py",
            "--json",
            "--no-configs",
            "--no-subsystems",
            "-o",
            str(work / "artifacts"),
            "--",
            "--token",
            ARG_SECRET,
            "--lr",
            "3",
        ],
        cwd=work,
        capture_output=True,
        text=True,
        env=env,
        timeout=1200,
    )
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    with open(data["tarball"], "rb") as f:
        blob = f.read()
    return work, data, blob, env


def members(blob):
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers()}, tar.getmembers()


@pytest.mark.slow
def test_no_planted_secret_in_any_byte(packed):
    _, result, blob, _ = packed
    files, _ = members(blob)
    planted = list(SECRETS.values()) + [ARG_SECRET, REMOTE_TOKEN, DIFF_SECRET]
    for name, data in files.items():
        for secret in planted:
            assert secret.encode() not in data, f"{secret[:6]}... leaked in {name}"
    manifest = json.loads(next(v for k, v in files.items() if k.endswith("MANIFEST.json")))
    assert manifest["redacted"], "redactions must be listed"
    text = json.dumps(manifest["redacted"])
    assert all(s not in text for s in planted)
    kinds = {r["kind"] for r in manifest["redacted"]}
    assert "secret-named variable" in kinds and "github token" in kinds
    assert not any(name.endswith(("secret.key", "secrets.json")) for name in files)
    run_dir = result["run_dir"]
    assert (
        os.stat(run_dir).st_mode & 0o777 == 0o700
        and os.stat(os.path.join(run_dir, "secret.key")).st_mode & 0o777 == 0o600
    )
    recorded = open(os.path.join(run_dir, "secrets.json")).read()
    assert "TORCH_PRIVATE_TOKEN" in recorded and not any(s in recorded for s in SECRETS.values())


@pytest.mark.slow
def test_tarball_holds_everything_a_maintainer_needs(packed):
    _, data, blob, _ = packed
    files, infos = members(blob)
    top = {n.split("/")[0] for n in files}
    assert len(top) == 1
    names = {n.split("/", 1)[1] for n in files}
    for required in (
        "ISSUE.md",
        "README.md",
        "verdict.json",
        "repro.py",
        "MANIFEST.json",
        "source/train.py",
        "source/_blocks.py",
        "source/git.json",
        "source/git.diff",
        "env/collect_env.txt",
        "env/collect_env.json",
        "env/environment.json",
        "env/packages.json",
        "logs/first_failing/stderr.txt",
    ):
        assert required in names, required
    assert all(i.isreg() and not i.name.startswith("/") and ".." not in i.name for i in infos)
    top = top.pop()
    gitinfo = json.loads(files[f"{top}/source/git.json"])
    diff = files[f"{top}/source/git.diff"].decode()
    assert "+0.2" in diff and "train.py" in diff and "unrelated draft" not in diff and "notes.md" not in diff
    assert gitinfo["diff_of"] == ["cfg.txt", "train.py"] and gitinfo["other_changed"] == ["notes.md"]
    manifest = json.loads(files[f"{top}/MANIFEST.json"])
    assert manifest["git_diff"] == {"content_of": ["cfg.txt", "train.py"], "names_only": ["notes.md"]}
    assert gitinfo["dirty"] is True and gitinfo["branch"] == "main" and len(gitinfo["commit"]) == 40
    assert gitinfo["remotes"]["origin"] == ["https://github.com/org/proj.git"]
    issue = next(v for k, v in files.items() if k.endswith("ISSUE.md")).decode()
    for field in (
        "### 🐛 Describe the bug",
        "### Error logs",
        "### Versions",
        "```python",
        "| inductor | FAIL |",
        "Generated by reprokit",
        "PyTorch version",
    ):
        assert field in issue, field
    assert "class Repro(torch.nn.Module)" in issue


@pytest.mark.slow
def test_repack_is_byte_identical_and_show_writes_nothing(packed):
    """Packed again from a shell that has none of the secret variables: the same bytes, so nothing leaks."""
    work, data, blob, env = packed
    run_dir = data["run_dir"]
    env = {k: v for k, v in env.items() if k not in SECRETS}
    p = subprocess.run(
        [sys.executable, "-m", "reprokit", "pack", run_dir, "--json"], capture_output=True, text=True, env=env, cwd=work
    )
    assert p.returncode == 0, p.stderr
    path = json.loads(p.stdout)["tarball"]
    assert path == data["tarball"]
    with open(path, "rb") as f:
        assert f.read() == blob
    before = sorted(os.listdir(os.path.dirname(run_dir)))
    p = subprocess.run(
        [sys.executable, "-m", "reprokit", "pack", run_dir, "--show"], capture_output=True, text=True, env=env, cwd=work
    )
    assert p.returncode == 0 and "MANIFEST.json" in p.stdout and "redacted:" in p.stdout
    # each redaction by kind and place, never its value
    assert "  secret value in logs/first_failing/stdout.txt" in p.stdout.splitlines()
    assert "  github token in env/environment.json:TORCHINDUCTOR_DEBUG_NOTE" in p.stdout.splitlines()
    assert not any(s in p.stdout for s in list(SECRETS.values()) + [ARG_SECRET, REMOTE_TOKEN, DIFF_SECRET])
    assert sorted(os.listdir(os.path.dirname(run_dir))) == before
    issue = subprocess.run(
        [sys.executable, "-m", "reprokit", "issue", run_dir], capture_output=True, text=True, env=env, cwd=work
    )
    assert issue.returncode == 0 and issue.stdout.startswith("[inductor][cpu] C++ compile error")


def test_run_folders_are_private_and_ignored_by_git(tmp_path):
    from reprokit.data.rundir import RunDir

    (tmp_path / "artifacts").mkdir()
    (tmp_path / "artifacts" / ".gitignore").write_text("mine\n")  # the user's own is kept
    run = RunDir.create(str(tmp_path / "fresh" / "artifacts"), "train")
    run.write_json("run.json", {})
    run.journal_append({"k": 1})
    trial = run.trial_dir("abc", "inductor")
    base = os.path.dirname(run.path)
    assert open(os.path.join(base, ".gitignore")).read().splitlines()[-1] == "*"
    assert open(run.file(".gitignore")).read().splitlines()[-1] == "*"
    modes = {p: os.stat(p).st_mode & 0o777 for p in (run.path, trial, run.file("run.json"), run.file("journal.jsonl"))}
    assert modes == {run.path: 0o700, trial: 0o700, run.file("run.json"): 0o600, run.file("journal.jsonl"): 0o600}
    RunDir.create(str(tmp_path / "artifacts"), "train")
    assert (tmp_path / "artifacts" / ".gitignore").read_text() == "mine\n"
    git_check = subprocess.run(["git", "init", "-q", str(tmp_path / "fresh")], capture_output=True)
    if git_check.returncode == 0:
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all"],
            cwd=tmp_path / "fresh",
            capture_output=True,
            text=True,
        ).stdout
        assert status == ""
