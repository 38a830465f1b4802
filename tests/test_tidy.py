"""A repro reads like code a person wrote (issue 50, item 7): the edits source reduction proposes toward that
(source/tidy.py), and the polish a verified repro gets (source/polish.py). Pure text; the edits' trials are the
source reduction's (tests/test_caught.py has the real script whose try/except must go)."""

import ast
import subprocess
import sys

from reprokit.fx.prelude import prelude_for
from reprokit.source.edits import checks, seeds
from reprokit.source.polish import explained, formatted, polished
from reprokit.source.tidy import tidy_candidates

SCRIPT = '''"""Trains a tiny model (a docstring that mentions torch.library)."""
import sys
import numpy as np
import torch

torch.manual_seed(0)


def main():
    weights = np
    model = torch.nn.Linear(4, 4)
    try:
        out = torch.compile(model)(torch.randn(2, 4))
    except Exception as e:
        print("failed", e)
        sys.exit(1)
    else:
        pass
    finally:
        pass
    assert out.shape == (2, 4)


if __name__ == "__main__":
    main()
'''


def test_all_edits_at_once_give_the_script_a_maintainer_would_write():
    every = tidy_candidates(SCRIPT)[0]
    assert every == (
        "import torch\n"
        "torch.manual_seed(0)\n"
        "model = torch.nn.Linear(4, 4)\n"
        "out = torch.compile(model)(torch.randn(2, 4))\n"
        "assert out.shape == (2, 4)\n"
    )
    # The seed and the check stay: the reduction refuses a candidate without them (source/reduce.py).
    assert seeds(every) == seeds(SCRIPT) and checks(every) == checks(SCRIPT)


def test_each_edit_is_also_proposed_alone_smaller_and_runnable():
    whole = ast.unparse(ast.parse(SCRIPT)) + "\n"
    alone = tidy_candidates(SCRIPT)[1:]
    for c in alone:
        assert len(c) < len(whole)
        compile(c, "candidate", "exec")
    gone = [[line for line in whole.splitlines() if line not in c.splitlines()] for c in alone]
    # Lines of the script each candidate no longer has (a dedented line counts as gone).
    assert gone == [
        ['"""Trains a tiny model (a docstring that mentions torch.library)."""'],
        [
            "    try:",
            "        out = torch.compile(model)(torch.randn(2, 4))",
            "    except Exception as e:",
            "        print('failed', e)",
            "        sys.exit(1)",
            "    else:",
            "        pass",
            "    finally:",
            "        pass",
        ],
        [
            "    except Exception as e:",
            "        print('failed', e)",
            "        sys.exit(1)",
        ],  # `except Exception: raise`
        ["    else:"],
        ["    finally:"],
        ["if __name__ == '__main__':", "    main()"],
        ["    weights = np"],
    ], gone


def test_a_repro_with_nothing_to_tidy_gets_no_candidate():
    assert tidy_candidates("import torch\nx = torch.ones(2)\nprint(torch.compile(torch.sin)(x))\n") == []


def test_a_failed_comparison_says_what_differs_before_the_exit(capsys):
    text = (
        "import sys\nimport torch\na = torch.ones(4)\nb = a + 1\n"
        "if not torch.allclose(a, b):\n    sys.exit(1)\n"
        "n, m = 1, 2\nif n != m:\n    print('lost')\n    sys.exit(1)\n"
    )
    out = explained(text)
    assert checks(out) == checks(text)  # the checks' tests are not changed, only what their exits say
    # `sys.exit(1)` says what differs as it exits: Python prints the message to stderr and exits 1
    assert "sys.exit(f'max abs diff" in out and "sys.exit(1)" not in out
    assert fresh(out) == (1, "", "max abs diff 1.0, 4 of 4 elements differ\n")
    assert fresh(out.replace("a + 1", "a")) == (1, "lost\n", "n = 1, m = 2\n")
    # an exit with another status keeps it, the values printed before it
    other = explained(text.replace("sys.exit(1)", "sys.exit(2)", 1))
    assert run(other, capsys) == (2, "max abs diff 1.0, 4 of 4 elements differ\n")
    # a compared expression with quotes of its own is left as it was (Python 3.11's f-strings cannot hold them)
    quoted = "import sys, torch\nout = {'y': torch.ones(1)}\nif not torch.allclose(out['y'], out['y'] + 1):\n    sys.exit(1)\n"
    assert explained(quoted) == ast.unparse(ast.parse(quoted)) + "\n"
    assert explained("import torch\nout = {'y': torch.ones(1)}\nassert torch.allclose(out['y'], out['y'])\n")


def test_a_polished_repro_pairs_alike_assignments_and_drops_the_brackets_unparse_adds():
    # pytorch#196173's repro as its reduction left it, in part
    repro = (
        "import torch\n\n\nclass AlternatingScheduler:\n    def __init__(self):\n        self.even = object()\n"
        "        self.odd = object()\n        self.active = self\n\n\ndef run():\n    sched = AlternatingScheduler()\n"
        "    w = torch.randn(1)\n    g = torch.randn(1)\n    history = []\n    return (w, g, history, sched)\n"
    )
    assert polished(repro) == (
        "import torch\n\n\nclass AlternatingScheduler:\n    def __init__(self):\n"
        "        self.even, self.odd = object(), object()\n        self.active = self\n\n\ndef run():\n"
        "    sched = AlternatingScheduler()\n    w, g = torch.randn(1), torch.randn(1)\n    history = []\n"
        "    return w, g, history, sched\n"
    )
    # the second value reads the first target: apart
    assert "a, b" not in polished("a = [1]\nb = [a]\n")


def fresh(text: str) -> tuple:
    """(exit status, stdout, stderr) of the text run in a fresh interpreter."""
    p = subprocess.run([sys.executable, "-c", text], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def run(text: str, capsys) -> tuple:
    """(exit status, stdout) of the text run in this process (torch imported once)."""
    capsys.readouterr()
    try:
        exec(compile(text, "repro", "exec"), {"__name__": "__main__"})
    except SystemExit as e:
        return e.code, capsys.readouterr().out
    return 0, capsys.readouterr().out


def test_a_repro_is_laid_out_by_the_formatter():
    assert (
        formatted(ast.unparse(ast.parse("x=(1,2)\nif x: y={'a':1}\n")) + "\n")
        == 'x = (1, 2)\nif x:\n    y = {"a": 1}\n'
    )


def test_a_polished_repro_keeps_no_block_that_does_nothing():
    # pytorch#198190's repro as its share of time left it: a cut had emptied the generator's `finally`.
    repro = (
        "def drain(gen):\n    out = []\n    while True:\n        try:\n            out.append(next(gen))\n"
        "        except StopIteration as stop:\n            return out, stop.value\n        finally:\n"
        "            pass\n\n\nprint(drain(iter([1, 2])))\n"
    )
    assert polished(repro) == (
        "def drain(gen):\n    out = []\n    while True:\n        try:\n            out.append(next(gen))\n"
        "        except StopIteration as stop:\n            return out, stop.value\n\n\nprint(drain(iter([1, 2])))\n"
    )
    # Where a block is all the statement has, it stays: `try: ... finally: pass` without a handler needs it.
    assert "finally:\n    pass" in polished("try:\n    x = 1\nfinally:\n    pass\n")


def test_an_init_that_only_calls_the_base_class_goes_and_one_that_does_more_stays():
    # pytorch#198190's repro as its share of time left it: its cuts had emptied ChunkedScorer's __init__
    repro = (
        "import torch.nn as nn\n\n\nclass Scorer(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "\n    def forward(self, x):\n        return x\n\n\nclass Empty(nn.Module):\n    def __init__(self):\n"
        '        """Nothing."""\n        super().__init__()\n\n\nprint(Scorer()(1), Empty())\n'
    )
    assert polished(repro) == (
        "import torch.nn as nn\n\n\nclass Scorer(nn.Module):\n    def forward(self, x):\n        return x\n\n\n"
        "class Empty(nn.Module):\n    pass\n\n\nprint(Scorer()(1), Empty())\n"
    )
    kept = (
        "class A(B):\n    def __init__(self, dim):\n        super().__init__()\n\n\n"
        "class C(B):\n    def __init__(self):\n        super().__init__(3)\n\n\n"
        "@dataclass\nclass D:\n    n: int = 3\n\n    def __init__(self):\n        super().__init__()\n"
    )
    # a parameter the base class does not take, an argument it does, a dataclass's own __init__ over the generated one
    assert polished(kept) == kept


def test_a_name_nothing_reads_leaves_a_paired_assignment():
    # pytorch#149037's repro as its reduction left it: `feats` is never read, `it` is.
    script = "def forward(x):\n    feats, it = [], iter(x)\n    return next(it)\n\n\nm, n = 1, 2\nm, n = n, m\nprint(forward([m]))\n"
    proposed = tidy_candidates(script)
    assert "def forward(x):\n    it = iter(x)\n    return next(it)\n" in proposed[0]
    assert "m, n = (n, m)" in proposed[0]  # a swap reads what it assigns: it stays one statement
    namespace: dict = {}
    exec(compile(proposed[0], "tidied", "exec"), namespace)
    assert namespace["forward"]([5]) == 5


def test_the_module_docstring_is_not_a_statement_the_graph_needs():
    assert prelude_for(SCRIPT, op_namespaces=("mylib",)) is None
