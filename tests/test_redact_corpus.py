"""Every secret format of the corpus is redacted in every place a pack shows text; values recorded by keyed hash
are redacted from a shell that no longer has them."""

import json
import os
import stat

import pytest
from secret_corpus import CODE_KEPT, CORPUS, MACHINE_PLACES, PATHS_REPLACED

from reprokit.report import keyed
from reprokit.report.redact import Redactor


def _torch_logs(text):
    return "\n".join(
        "V1123 01:02:03.456000 4242 torch/_dynamo/output_graph.py:1234] [0/0] " + l for l in text.splitlines()
    )


# How each place of a pack shows a line of text: the formats a scrubber meets there.
PLACES = {
    "env/environment.json": lambda t: json.dumps({"TORCHINDUCTOR_NOTE": t}, indent=2),
    "env/command.txt": lambda t: "reprokit bisect train.py -- " + t + "\nargv: " + json.dumps(["--lr", "3", t]),
    "logs/stdout.txt": lambda t: "step 1 loss 0.25\n" + t + "\nstep 2 loss 0.24\n",
    "logs/stderr.txt": lambda t: "UserWarning: deprecated\n" + t + "\nRuntimeError: boom\n",
    "logs/trace (TORCH_LOGS)": _torch_logs,
    "logs/stacks.txt": lambda t: (
        'Thread 0x7f3a (most recent call first):\n  File "train.py", line 12 in main\n'
        + "\n".join("    " + l for l in t.splitlines())
    ),
    "source/git.json (remotes)": lambda t: json.dumps({"remotes": {"origin": ["https://github.com/o/p.git", t]}}),
    "source/git.diff": lambda t: "diff --git a/cfg b/cfg\n@@ -1 +1,9 @@\n" + "\n".join("+" + l for l in t.splitlines()),
    "source/train.py": lambda t: "import os\n\n" + t + "\nprint('done')\n",
}


def _redactor(**kw):
    return Redactor(home="/nonexistent-home", user="", host="", **kw)


def test_the_corpus_has_at_least_40_formats():
    assert len({fmt for fmt, _, _ in CORPUS}) == len(CORPUS) >= 40


@pytest.mark.parametrize("place", sorted(PLACES))
def test_each_format_is_redacted_in_each_place(place):
    leaked = []
    for fmt, line, secret in CORPUS:
        r = _redactor()
        out = r.scrub(PLACES[place](line), place)
        if secret in out:
            leaked.append(fmt)
        assert r.redactions and all(set(x) == {"kind", "place"} and x["place"] == place for x in r.redactions), fmt
        assert secret not in json.dumps(r.redactions)
    assert leaked == []


def test_detect_secrets_finds_nothing_left_in_the_scrubbed_corpus():
    """A second opinion: detect-secrets' plugins (bar the entropy guesses) over every scrubbed line."""
    pytest.importorskip("detect_secrets")
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.settings import default_settings

    with default_settings():
        plugins = [
            cls()
            for cls in get_mapping_from_secret_type_to_class().values()
            if "Entropy" not in cls.__name__ and "IP" not in cls.__name__
        ]
        raw = [
            fmt for fmt, line, _ in CORPUS if any(list(p.analyze_string(l)) for p in plugins for l in line.splitlines())
        ]
        left = [
            (fmt, p.secret_type)
            for fmt, line, _ in CORPUS
            for l in _redactor().scrub(line, "x").splitlines()
            for p in plugins
            if any("redacted" not in m for m in p.analyze_string(l))
        ]
    assert len(raw) >= 14 and left == []


def test_code_in_a_repro_is_left_alone():
    code = (
        "tokens = torch.randint(0, vocab, (batch, seq))\nmax_tokens: int = 4096\nkey_states = self.wk(x)\n"
        "api_key: str = None\nif password == other:\n    token = tokenizer(text)\nnum_tokens=8\n"
    )
    r = _redactor()
    assert r.scrub(code, "repro.py") == code and r.redactions == []


@pytest.mark.parametrize("place", sorted(PLACES))
def test_code_and_urls_in_a_message_stay_whole(place):
    """A message's operators (the #181097 guard's `//`) and URLs that name no machine are no paths: nothing is
    replaced, nothing is noted."""
    for line in CODE_KEPT:
        r = _redactor(places=MACHINE_PLACES)
        assert r.scrub(PLACES[place](line), place) == PLACES[place](line), line
        assert r.redactions == [], line


@pytest.mark.parametrize("place", sorted(PLACES))
def test_the_machines_paths_go_and_the_code_beside_them_stays(place):
    for line, path in PATHS_REPLACED:
        r = _redactor(places=MACHINE_PLACES)
        out = r.scrub(PLACES[place](line), place)
        assert path not in out and "/alice" not in out, out
        code = [
            part for part in ("x.size()[0] // 5 != 1", "x // 5", "https://github.com/pytorch/pytorch") if part in line
        ]
        assert all(part in out for part in code), out
        assert any(x["kind"].endswith(" path") for x in r.redactions), out


def test_values_recorded_at_bisect_time_are_redacted_from_a_shell_without_them(tmp_path):
    env = {
        "TORCH_PRIVATE_TOKEN": "plain-value-nobody-could-guess-4711",
        "DB_PASS": "x!y@z#w$",
        "PATH": "/usr/bin",
        "SHORT_KEY": "abc",
    }
    keyed.record(str(tmp_path), env, identity={"home": "/home/alice", "user": "alice", "host": "node7"})
    for name in (keyed.KEY_FILE, keyed.RECORD_FILE):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o600
        assert b"plain-value" not in (tmp_path / name).read_bytes()
    assert sorted(json.loads((tmp_path / keyed.RECORD_FILE).read_text())["variables"]) == [
        "DB_PASS",
        "TORCH_PRIVATE_TOKEN",
    ]
    outs = []
    for place, wrap in sorted(PLACES.items()):
        r = Redactor.for_run(str(tmp_path))
        assert r.home == "/home/alice" and r.known_secrets == []  # nothing from the live shell
        out = r.scrub(wrap("got plain-value-nobody-could-guess-4711 and pw=x!y@z#w$;"), place)
        assert "plain-value" not in out and "x!y@z#w$" not in out, place
        assert {"kind": "secret value", "place": place} in r.redactions
        outs.append(out)
    # a look-alike differs in one character and stays (keyed hashes match whole values only)
    assert "plain-value-nobody-could-guess-4712" in Redactor.for_run(str(tmp_path)).scrub(
        "plain-value-nobody-could-guess-4712", "x"
    )
