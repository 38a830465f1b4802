"""No path of the machine in any member of the tarball (issue #28): the scrubber's rules, then the example's pack."""

import getpass
import io
import json
import os
import pathlib
import re
import site
import socket
import subprocess
import sys
import tarfile
import tempfile

import pytest

from reprokit.report import keyed
from reprokit.report.places import ordered
from reprokit.report.portable import machine_paths, portable_with
from reprokit.report.redact import Redactor, live_identity
from reprokit.trial.cache import compile_cache_root

REPO = pathlib.Path(__file__).parent.parent
EXAMPLE = REPO / "examples" / "relu_bug.py"


def pairs(**named) -> list:
    return ordered([(f"<{k.replace('_', '-')}>", v) for k, v in named.items()])


def test_longest_path_wins_and_a_second_pass_changes_nothing():
    """The header once read `--output-dir <tmp><tmp>.k745IDc1wV/out`: /tmp matched again inside the name."""
    text = "--output-dir /tmp/tmp.k745IDc1wV/out"
    assert portable_with(text, pairs(tmp=["/tmp"])) == "--output-dir <tmp>/tmp.k745IDc1wV/out"
    both = pairs(tmp=["/tmp", "/tmp/tmp.k745IDc1wV"])
    assert portable_with(text, both) == "--output-dir <tmp>/out"
    places = pairs(run_dir=["/tmp/tmp/run"], project=["/work/proj"], tmp=["/tmp"], home=["/home/al"])
    text = (
        "cd /tmp/tmp/run && python /work/proj/train.py > /tmp/tmp/log; /home/al/.x /tmp.\n"
        "<li>/work/proj/a.py</li> '/home/al' /tmpfoo /data/tmp/x /tmp.x1/y"
    )
    once = portable_with(text, places)
    assert once == (
        "cd <run-dir> && python <project>/train.py > <tmp>/tmp/log; <home>/.x <tmp>.\n"
        "<li><project>/a.py</li> '<home>' /tmpfoo /data/tmp/x /tmp.x1/y"
    )
    assert portable_with(once, places) == once
    assert portable_with(portable_with(once, pairs(tmp=["/tmp/tmp"])), places) == once
    compile_cmd = "g++ -I/home/al/venv/include/python3.11 -L/tmp/tmp/run/lib -o /tmp/x.so"
    assert portable_with(compile_cmd, places) == "g++ -I<home>/venv/include/python3.11 -L<run-dir>/lib -o <tmp>/x.so"


def test_a_named_place_glued_to_the_text_before_it_is_still_replaced():
    """Two crash reports interleaved in one stderr (CI at 4752c0d) glued the project's path to a module's name."""
    places = pairs(project=["/tmp/ciB.majX"], tmp=["/tmp"])
    text = 'File , "torch._C._fft/tmp/ciB.majX/reprokit/trial/forkserver.py", line 70'
    once = portable_with(text, places)
    assert once == 'File , "torch._C._fft<project>/reprokit/trial/forkserver.py", line 70'
    assert portable_with(once, places) == once
    assert portable_with("/data/tmp/x", places) == "/data/tmp/x"  # a short one still needs a path's start


def test_placeholders_are_text_in_html_and_json_stays_json():
    r = Redactor(home="/home/al", user="", host="", places=pairs(project=["/work/proj"]))
    assert r.scrub("<li>/work/proj/a.py:3</li>", "tlparse/index.html") == "<li>&lt;project&gt;/a.py:3</li>"
    assert r.scrub(r.scrub("<li>/work/proj/a.py</li>", "x.html"), "x.html") == "<li>&lt;project&gt;/a.py</li>"
    out = r.scrub(json.dumps({"cwd": "/work/proj", "f": "/home/al/.cache/x"}), "spec.json")
    assert json.loads(out) == {"cwd": "<project>", "f": "<home>/.cache/x"}
    assert {"kind": "project path", "place": "spec.json"} in r.redactions
    assert {"kind": "home path", "place": "spec.json"} in r.redactions


def test_the_places_recorded_at_bisect_time_are_the_ones_scrubbed(tmp_path):
    """Another shell (another TMPDIR, venv, home) packs the same bytes: the pack reads the run's recorded places."""
    identity = {
        "home": "/home/alice",
        "user": "alice",
        "host": "node7",
        "places": {
            "<tmp>": ["/scratch/alice/tmp"],
            "<site-packages>": ["/opt/venv/lib/python3.11/site-packages"],
            "<python-executable>": ["/opt/venv/bin/python"],
        },
    }
    keyed.record(str(tmp_path), {}, identity=identity)
    (tmp_path / "run.json").write_text(
        json.dumps({"options": {"script": "/home/alice/proj/train.py", "cwd": "/home/alice"}})
    )
    text = (
        f"{tmp_path}/trials/t1 /scratch/alice/tmp/x /opt/venv/bin/python /home/alice/proj/train.py "
        f"/home/alice/data.csv /opt/venv/lib/python3.11/site-packages/torch/a.py on node7"
    )
    r = Redactor.for_run(str(tmp_path))
    out = r.scrub(text, "log")
    assert out == (
        "<run-dir>/trials/t1 <tmp>/x <python-executable> <project>/train.py <cwd>/data.csv "
        "<site-packages>/torch/a.py on <host>"
    )
    kinds = {e["kind"] for e in r.redactions}
    assert {
        "run-dir path",
        "tmp path",
        "python-executable path",
        "project path",
        "cwd path",
        "site-packages path",
        "host name",
    } <= kinds
    recorded = json.loads((tmp_path / keyed.RECORD_FILE).read_text())["identity"]
    assert recorded["run_dir"] == str(tmp_path) and "places" in live_identity()


# -- the example's tarball ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def example_pack(tmp_path_factory):
    """`reprokit bisect examples/relu_bug.py` once, from the project root, into a temp folder."""
    out = tmp_path_factory.mktemp("paths") / "artifacts"
    p = subprocess.run(
        [sys.executable, "-m", "reprokit", "bisect", str(EXAMPLE.relative_to(REPO)), "--json", "-o", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1500,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    with open(data["tarball"], "rb") as f:
        return data, f.read()


def machine_needles(run_dir: str) -> dict:
    """What must not appear in any member: {name: regex}. A short path (/tmp, /root) counts where a path starts
    and ends (not /tmp inside /data/tmp or /tmpfoo), a longer one anywhere; user and host names as words, when
    long enough to mean them."""
    paths = {
        "project root": str(REPO),
        "sys.prefix": sys.prefix,
        "sys.executable": sys.executable,
        "run folder": run_dir,
        "output folder": os.path.dirname(run_dir),
        "home": os.path.expanduser("~"),
        "temp folder": tempfile.gettempdir(),
        "compile cache": compile_cache_root(""),
    }
    paths.update({f"site-packages {i}": p for i, p in enumerate(site.getsitepackages() + [site.getusersitepackages()])})
    paths.update({f"{k} (resolved)": os.path.realpath(v) for k, v in list(paths.items())})
    needles = {
        k: re.compile(re.escape(v) if len(v) > 6 else r"(?<![\w.~])" + re.escape(v) + r"(?![\w@+~-]|\.\w)")
        for k, v in paths.items()
        if v and v not in ("/", "/usr", "/usr/local")
    }
    for name, value in (("user", getpass.getuser()), ("host", socket.gethostname())):
        if value and len(value) >= 3 and value != "root":  # what the redactor replaces (a shorter one is a word)
            needles[name] = re.compile(rf"\b{re.escape(value)}\b")
    return needles


@pytest.mark.slow
def test_the_quick_start_finds_what_the_readme_says(example_pack):
    """README: stage inductor, lowering aten.relu, a 3-node verified repro.py. The planted kernel aborts the process
    at run time, so a graph trial's counters and the lowering it names survive only if saved before the graph
    runs (before: "lowerings #9: None", found in 10 trials instead of 7)."""
    data, _ = example_pack
    assert (data["failing_stage"], data["kind"], data["signature"]["exc_type"]) == ("inductor", "crash", "SIGABRT")
    sub = data["subsystem"]
    assert (sub["name"], sub["applications"], sub["confirmed"]) == ("lowerings", 52, True), sub
    assert sub["detail"].startswith("aten.relu.default "), sub
    assert data["nodes"]["minified"] == 3 and data["repro_verified"] is True and data["repro_kind"] == "graph"


@pytest.mark.slow
def test_no_machine_path_in_any_member_of_the_examples_tarball(example_pack):
    data, blob = example_pack
    needles = machine_needles(data["run_dir"])
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        members = {
            m.name.split("/", 1)[1]: tar.extractfile(m).read().decode("utf-8", "replace") for m in tar.getmembers()
        }
    assert len(members) > 20 and "verdict.json" in members and "logs/first_failing/stderr.txt" in members
    leaks = {(name, what) for name, text in members.items() for what, rx in needles.items() if rx.search(text)}
    assert not leaks, sorted(leaks)
    assert not {name: machine_paths(t)[:3] for name, t in members.items() if machine_paths(t)}
    manifest = json.loads(members["MANIFEST.json"])
    kinds = {r["kind"] for r in manifest["redacted"]}
    assert {"run-dir path", "project path", "site-packages path"} <= kinds, kinds
    assert "<run-dir>/trials/" in members["verdict.json"] and "<project>/relu_bug.py" in members["verdict.json"]


@pytest.mark.slow
def test_the_examples_pack_is_the_same_bytes_from_another_shell(example_pack, tmp_path):
    """Another temp folder, home and working folder: the recorded places are scrubbed, so the bytes are the same."""
    data, blob = example_pack
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), "HOME": str(tmp_path), "PYTHONPATH": str(REPO)}
    p = subprocess.run(
        [sys.executable, "-m", "reprokit", "pack", data["run_dir"], "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    with open(json.loads(p.stdout)["tarball"], "rb") as f:
        assert f.read() == blob
