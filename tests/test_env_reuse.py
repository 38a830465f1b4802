"""collect_env's answer is reused for the same install (about 3 s a run: a fresh interpreter imports torch), and
collected afresh once anything it depends on changes."""

import os
import time

from reprokit.report import env


def test_the_same_install_reuses_collect_envs_answer_and_a_changed_one_does_not(tmp_path, monkeypatch):
    monkeypatch.setenv("REPROKIT_CACHE_DIR", str(tmp_path / "cache"))
    first = env.collect()
    assert first["torch"] and "error" not in first and first["packages"]["torch"]
    started = time.monotonic()
    again = env.collect()
    assert time.monotonic() - started < 1.0 and again == first
    assert len(os.listdir(tmp_path / "cache" / "env")) == 1
    key = env.install_key(env.sys.executable)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # what "Is CUDA available" answers may change
    assert env.install_key(env.sys.executable) != key
    monkeypatch.setenv("REPROKIT_CACHE_DIR", "run")  # the benchmark's cold row: nothing reused
    assert env.install_key(env.sys.executable) is None


def test_another_interpreter_is_always_asked_afresh(tmp_path):
    other = tmp_path / "python"
    other.symlink_to("/bin/true")
    assert env.install_key(str(other)) is None
