"""A C++ compile error met earlier in a run is replayed, not compiled again (child/compile_errors.py): the same error
from inductor's own frame, the compiler not run on that source again, and only for a verdict on the source."""

import json
import os
import stat
import subprocess
import sys

from reprokit.child.compile_errors import keeps
from reprokit.trial.cache import compile_cache_root

SCRIPT = r"""
import json, sys, tempfile, torch
from reprokit.child import compile_errors
from reprokit.child.classify import classify_exception
from reprokit.child.state import TrialState
from reprokit.data.records import TrialSpec

replayed = []
compile_errors.install(replayed.append)
torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"
try:
    torch.compile(lambda x: torch.relu(x) + 1)(torch.randn(8))
    print(json.dumps({"kind": "pass"}))
except Exception as e:  # as a trial classifies it: its signature is the failure's identity
    result = classify_exception(TrialState(TrialSpec(mode="script", stage="inductor"), tempfile.mkdtemp()), e)
    print(json.dumps({**result, "replayed": len(replayed)}))
"""


def run(tmp_path, folder, log):
    env = {
        **os.environ,
        "REPROKIT_COMPILE_ERRORS": str(folder),
        "CXX": str(tmp_path / "cxx"),
        "CXX_LOG": str(log),
        "TORCHINDUCTOR_CACHE_DIR": os.path.join(compile_cache_root(""), "inductor"),
        "TORCHINDUCTOR_FX_GRAPH_CACHE": "0",
        "TORCHINDUCTOR_AUTOGRAD_CACHE": "0",
        "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    }
    p = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_a_second_process_gets_the_same_error_from_inductors_frame_without_running_the_compiler(tmp_path):
    # A compiler that logs each source file it is given, then is g++: what the replay saves is seen, not inferred.
    cxx = tmp_path / "cxx"
    cxx.write_text(
        '#!/bin/sh\nfor a in "$@"; do case "$a" in *.cpp) echo "$a" >> "$CXX_LOG";; esac; done\nexec g++ "$@"\n'
    )
    cxx.chmod(cxx.stat().st_mode | stat.S_IEXEC)
    folder, first_log, second_log = tmp_path / "errors", tmp_path / "first.log", tmp_path / "second.log"

    first = run(tmp_path, folder, first_log)
    assert first["kind"] == "exception" and first["replayed"] == 0
    assert "CppCompileError" in first["signature"]["cause"] and "compile" in first["signature"]["message"]
    assert len(os.listdir(folder)) == 1  # the failing kernel's error, nothing else
    failing = [line for line in first_log.read_text().splitlines() if "compile error!" in open(line).read()]
    assert failing, first_log.read_text()

    second = run(tmp_path, folder, second_log)
    assert second["replayed"] == 1
    assert second["signature"] == first["signature"]
    assert first["signature"]["cause"].endswith("cpp_builder.py:_run_compile_cmd")
    compiled_again = second_log.read_text().splitlines() if second_log.exists() else []
    assert not set(failing) & set(compiled_again)


def test_only_the_compilers_verdict_on_the_source_is_kept():
    assert keeps("/tmp/x/cabc.cpp:41:18: error: 'compile' was not declared in this scope")
    assert keeps("/tmp/x/cabc.cpp:1:10: fatal error: omp.h: No such file or directory")
    assert not keeps("g++: fatal error: Killed signal terminated program cc1plus")
    assert not keeps("/tmp/x/cabc.cpp:41:18: internal compiler error: Segmentation fault")
    assert not keeps("collect2: error: ld returned 1 exit status")
