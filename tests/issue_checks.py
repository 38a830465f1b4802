"""ISSUE.md checked as a reader would: rendered with a GitHub-flavoured Markdown renderer, its sections those of
PyTorch's torch.compile bug-report form in order, its error section short and holding the decisive line, and no
path of this machine anywhere in it."""

import json
import os
import pathlib
import subprocess
import sys
import tarfile
from shutil import which as shutil_which  # noqa: F401  (tests ask whether tlparse is installed)

from markdown_it import MarkdownIt

from reprokit.report.portable import machine_paths

REPO = pathlib.Path(__file__).parent.parent
# The headings GitHub writes for the fields of PyTorch's pt2-bug-report form, in its order.
FORM_SECTIONS = ["🐛 Describe the bug", "Error logs", "Versions"]


def sections(text: str) -> dict:
    """{h3 heading: [tokens under it]} of the rendered issue, in order."""
    tokens = MarkdownIt("gfm-like", {"linkify": False}).disable("linkify").parse(text)
    found, current = {}, None
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.tag == "h3":
            current = tokens[i + 1].content
            found[current] = []
        elif current is not None:
            found[current].append(tok)
    return found


def error_block(text: str) -> str:
    """The code block of the Error logs section."""
    blocks = [t.content for t in sections(text)["Error logs"] if t.type in ("fence", "code_block")]
    assert blocks, "the Error logs section has no code block"
    return blocks[0]


def issue_of(run_dir: str) -> str:
    p = subprocess.run(
        [sys.executable, "-m", "reprokit", "issue", run_dir],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    return p.stdout


def check_issue(
    run_dir: str, decisive: str, title: str = "", labels: tuple = (), tarball: str = "", tlparse: bool = False
) -> str:
    """ISSUE.md of a run, checked (and its tarball's members, when given); returns it."""
    text = issue_of(run_dir)
    assert list(sections(text)) == FORM_SECTIONS, list(sections(text))
    block = error_block(text)
    assert len(block.rstrip("\n").splitlines()) <= 40, block
    assert decisive in block, block
    assert "warning:" not in block, block
    assert not machine_paths(text), machine_paths(text)
    assert len(text) <= 65_536
    first = text.splitlines()[0]
    assert first.startswith(title), first
    for label in ("oncall: pt2",) + tuple(labels):
        assert f"`{label}`" in text.splitlines()[2], text.splitlines()[2]
    verdict = json.loads(pathlib.Path(run_dir, "verdict.json").read_text())
    if verdict.get("test_repro"):
        assert "a failing test in PyTorch's style" in text and verdict["test_repro_verified"] is True, verdict[
            "test_repro_failure"
        ]
    check_reader_facing(text, verdict)
    if tarball:
        check_tarball(tarball, verdict, text, tlparse)
    return text


# What a GitHub reader cannot open: files of the pack, named in the issue's text.
PACK_FILES = (
    "verdict.json",
    "logs/",
    "test_repro.py",
    "stderr.txt",
    "MANIFEST.json",
    "source/",
    "in the pack",
    "ISSUE.md",
    "index.html",
)


def check_reader_facing(text: str, verdict: dict) -> None:
    """Each fact once, the minimal graph and not the original, and no file of the pack named (the tarball may be)."""
    for name in PACK_FILES:
        assert name not in text, name
    assert "as Dynamo produced it" not in text and "L_fn_modules" not in text  # the original graph
    detail = (verdict.get("subsystem") or {}).get("detail")
    if detail:
        assert text.count(detail) == 1, detail  # the FX node's text once
    assert text.count(".tar.gz`") == 1


def check_tarball(tarball: str, verdict: dict, issue: str, tlparse: bool) -> None:
    """The pack holds what ISSUE.md says it attaches: test_repro.py, the logs, tlparse's report; repro.py is
    portable."""
    with tarfile.open(tarball) as tar:
        files = {m.name.split("/", 1)[1]: tar.extractfile(m).read().decode(errors="replace") for m in tar.getmembers()}
    assert f"`{os.path.basename(tarball)}`" in issue
    assert any(name.startswith("logs/") and name.endswith("stderr.txt") for name in files)
    for name in ("repro.py", "test_repro.py"):
        if name in files:
            comments = "\n".join(l for l in files[name].splitlines() if l.lstrip().startswith("#"))
            assert not machine_paths(comments), machine_paths(comments)
    if verdict.get("test_repro"):
        assert "test_repro.py" in files and "TestCase" in files["test_repro.py"]
    assert ("tlparse's report" in issue) == tlparse
    if tlparse:
        assert any(name.endswith("tlparse/index.html") for name in files)


def check_compile_errors_replayed(run_dir: str) -> None:
    """A search trial met the kernel that failed to compile before and was answered with its error
    (child/compile_errors.py); no verification of the repro was (it compiles everything itself)."""
    replayed = {}
    for name in os.listdir(os.path.join(run_dir, "trials")):
        result = os.path.join(run_dir, "trials", name, "result.json")
        if os.path.exists(result):
            with open(result) as f:
                replayed[name] = len(json.load(f).get("compile_errors_replayed") or [])
    assert any(n for name, n in replayed.items() if not name.startswith("verify-repro")), replayed
    assert not any(n for name, n in replayed.items() if name.startswith("verify-repro")), replayed
