"""The README stays a user's page: short, its quick start exactly what CI runs, its links and commands real.

Fast: reads files and asks click for the command list; nothing is compiled.
"""

import pathlib
import re

from click.testing import CliRunner

from reprokit.cli import main

REPO = pathlib.Path(__file__).parent.parent
README = (REPO / "README.md").read_text()
QUICK_START = ['pip install -e ".[test]" && reprokit bisect examples/relu_bug.py', 'python -m pytest -q -m "not gpu"']


def section(text: str, title: str) -> str:
    """The body of a `## title` section, up to the next `## ` heading."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"no '## {title}' section"
    return match.group(1)


def first_block(text: str) -> list:
    """The lines of the first fenced code block in text."""
    match = re.search(r"^```[^\n]*\n(.*?)^```", text, re.M | re.S)
    assert match, "no code block"
    return match.group(1).splitlines()


def local_links(text: str) -> list:
    """Relative link targets (no scheme), anchors dropped."""
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    return [t.split("#")[0] for t in targets if "://" not in t and not t.startswith(("#", "mailto:"))]


def test_readme_is_at_most_150_lines():
    assert len(README.splitlines()) <= 150


def test_quick_start_is_exactly_the_two_commands():
    assert first_block(section(README, "Quick start")) == QUICK_START


def test_ci_runs_exactly_the_readme_test_command():
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert QUICK_START[1] in ci


def test_readme_links_docs_and_bench_and_they_exist():
    links = local_links(README)
    assert "bench/README.md" in links
    assert any(re.fullmatch(r"docs/[\w.-]+\.md", link) for link in links)
    missing = [link for link in links if not (REPO / link).is_file()]
    assert not missing, missing


def test_links_inside_docs_and_bench_exist():
    pages = sorted((REPO / "docs").glob("*.md")) + [REPO / "bench" / "README.md"]
    missing = [
        f"{page.relative_to(REPO)}: {link}"
        for page in pages
        for link in local_links(page.read_text())
        if not (page.parent / link).resolve().exists()
    ]
    assert not missing, missing


def test_every_readme_command_exists():
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0, result.output
    listed = result.output.split("Commands:", 1)[1]
    known = {line.split()[0] for line in listed.splitlines() if line.strip()}
    used = {line.split()[1] for line in first_block(section(README, "Commands")) if line.startswith("reprokit ")}
    assert used, "no `reprokit <command>` lines in the Commands block"
    assert used <= known, used - known


def test_layout_names_every_package_folder():
    layout = section(README, "Layout")
    packages = sorted(p.parent.name for p in (REPO / "reprokit").glob("*/__init__.py"))
    assert packages
    missing = [name for name in packages if f"`{name}/`" not in layout]
    assert not missing, missing
