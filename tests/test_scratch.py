"""A trial's TMPDIR (trial/scratch.py): made fresh, linked to inductor's shared header cache, removed after."""

import os
import tempfile

from reprokit.trial import scratch


def test_a_tmpdir_missing_here_is_not_created_and_the_link_sits_beside_the_folder_used(tmp_path, monkeypatch):
    """A SLURM node's TMPDIR need not exist on the submit host: the trial's folder falls back to this machine's own,
    and inductor's cache link is made there, not by creating the missing folder."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    missing = tmp_path / "node-local" / "tmp"
    with scratch.scratch({"TMPDIR": str(missing)}) as env:
        used = env["TMPDIR"]
        assert os.path.dirname(used) == str(tmp_path)
        link = os.path.join(used, scratch._inductor_default_name())
        assert os.path.islink(link) and os.readlink(link) == str(tmp_path / scratch._inductor_default_name())
    assert not missing.parent.exists()
    assert not os.path.exists(used)
    assert (tmp_path / scratch._inductor_default_name()).is_dir()  # the shared cache stays for the next trial


def test_the_folder_goes_even_when_the_block_raises(tmp_path):
    try:
        with scratch.scratch({"TMPDIR": str(tmp_path)}) as env:
            open(os.path.join(env["TMPDIR"], "g++-partial.o"), "w").close()
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert [p.name for p in tmp_path.iterdir()] == [scratch._inductor_default_name()]
