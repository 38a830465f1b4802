"""Signatures compare failures; the redactor keeps secrets out of the pack."""

import dataclasses

import pytest

from reprokit.data import signature as sig
from reprokit.data.records import TrialSpec
from reprokit.data.signature import Signature
from reprokit.report.pack import deterministic_tar
from reprokit.report.redact import Redactor


def test_messages_normalise_numbers_paths_and_addresses():
    a = sig.normalise_message("Expected size 128 but got 64 at 0x7f00aa in /tmp/tmpab12cd/x.py")
    b = sig.normalise_message("Expected size 256 but got 32 at 0x7fffbb in /tmp/tmpzz99/x.py")
    assert a == b


@pytest.mark.newest_smoke
def test_an_operator_or_a_url_is_no_path_and_a_signature_quotes_the_message_as_said():
    """pytorch/pytorch#181097's guard lost its division: `x.size()[0] // 5 != 1` normalised to
    `x.size()[N] <path> N != N`. Numbers still go for matching; the report quotes the text torch wrote."""
    guard = "Guard failed: x.size()[0] // 5 != 1"
    assert sig.normalise_message(guard) == "Guard failed: x.size()[N] // N != N"
    assert sig.normalise_message("see https://github.com/pytorch/pytorch/issues/181097") == (
        "see https://github.com/pytorch/pytorch/issues/N"
    )
    assert (
        sig.normalise_message("(s0 + 1)/2 vs a/b in torch/_inductor/ir.py")
        == "(sN + N)/N vs a/b in torch/_inductor/ir.py"
    )
    assert sig.normalise_message('File "/home/u/p/x.py" and C:/Users/u/y.py') == 'File "<path>" and <path>'
    one = sig.for_exception("AssertionError", guard + "\nmore", [], "/site/torch")
    other = sig.for_exception("AssertionError", guard.replace("//", "%"), [], "/site/torch")
    assert one.said() == "AssertionError: " + guard and one.short() == "AssertionError: " + one.message
    assert one.matches(Signature.from_dict(one.to_dict())) and one == dataclasses.replace(one, text="x")
    assert not one.matches(other)  # another operator, another guard (before, both were `<path> N`)
    assert one.matches(sig.for_exception("AssertionError", guard.replace("5", "7"), [], "/site/torch"))
    assert Signature("exception", "RuntimeError", "boom").said() == "RuntimeError: boom"  # a record without text


def test_signature_matching_uses_kind_type_message_frame():
    s = Signature("exception", "RuntimeError", "boom", "torch/a.py:f")
    assert s.matches(Signature("exception", "RuntimeError", "boom", "torch/a.py:f"))
    assert not s.matches(Signature("exception", "RuntimeError", "boom", "torch/b.py:g"))
    assert not s.matches(Signature("exception", "ValueError", "boom", "torch/a.py:f"))
    assert not s.matches(Signature("crash", "SIGSEGV", "killed by SIGSEGV"))
    assert sig.for_signal(11).exc_type == "SIGSEGV"


def test_trial_key_ignores_label_but_not_attempt():
    a = TrialSpec(mode="script", stage="inductor", script="x.py", label="one")
    assert a.key() == TrialSpec(mode="script", stage="inductor", script="x.py", label="two").key()
    assert a.key() != TrialSpec(mode="script", stage="inductor", script="x.py", attempt=1).key()
    assert TrialSpec.from_dict(a.to_dict()) == a


SECRETS = {
    "github": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "hf": "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "openai": "sk-" + "proj-abcdefghijklmnopqrstuvwx",
    "aws": "AKIA" + "ABCDEFGHIJKLMNOP",
    "slack": "xoxb-" + "123456789012-abcdefghij",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}


def test_patterns_catch_known_token_shapes():
    r = Redactor(known_secrets=[], home="/home/alice", user="alice", host="gpu-node-7")
    text = "\n".join(f"{k}: {v}" for k, v in SECRETS.items())
    text += "\nclone https://bob:hunter2@github.com/x/y.git\nrun --api-key=zzzsecret1 --token abc123456\n"
    text += "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n/home/alice/run on gpu-node-7"
    out = r.scrub(text, "log")
    for value in list(SECRETS.values()) + ["hunter2", "zzzsecret1", "abc123456", "MIIEow", "alice", "gpu-node-7"]:
        assert value not in out
    assert "<home>/run" in out  # the home folder as ISSUE.md names it
    kinds = {x["kind"] for x in r.redactions}
    assert {"github token", "hugging face token", "url credentials", "secret argument", "private key block"} <= kinds
    assert all(set(x) == {"kind", "place"} for x in r.redactions)


def test_secret_named_variables_report_presence_only_and_their_values_are_scrubbed_anywhere():
    env = {"TORCH_HUB_TOKEN": "plainvalue-no-pattern-123", "MY_PASSWORD": "p4ssw0rd!!"}
    r = Redactor.from_environment(env)
    assert r.env_value("TORCH_HUB_TOKEN", env["TORCH_HUB_TOKEN"], "env") == "<set, value withheld>"
    out = r.scrub("printed plainvalue-no-pattern-123 and p4ssw0rd!!", "stdout")
    assert "plainvalue" not in out and "p4ssw0rd" not in out


def test_tarball_is_deterministic_and_flat():
    import io
    import tarfile

    members = {"b.txt": b"2", "a/x.txt": b"1"}
    one, two = deterministic_tar(members, "top"), deterministic_tar(dict(reversed(members.items())), "top")
    assert one == two
    with tarfile.open(fileobj=io.BytesIO(one)) as tar:
        infos = tar.getmembers()
    assert [i.name for i in infos] == ["top/a/x.txt", "top/b.txt"]
    assert all(i.isreg() and i.mtime == 0 and i.uid == 0 and i.uname == "" for i in infos)


def test_digits_inside_identifiers_survive_normalisation():
    assert (
        sig.normalise_message("unrecognized config cpp.inject_log1p_bug = 3")
        == "unrecognized config cpp.inject_log1p_bug = N"
    )
    assert "conv2d" in sig.normalise_message("conv2d got 4 dims") and "float16" in sig.normalise_message("float16 x 2")


def test_float_values_in_messages_normalise_alike():
    a = sig.normalise_message("compiled differs: 1.0000152587890625")
    assert a == sig.normalise_message("compiled differs: 2.5") == "compiled differs: N"
    assert (
        sig.normalise_message("kernel cidgcdipbf23ipx2qi22f5 at c0ffee1234abcd")
        == "kernel cidgcdipbf23ipx2qi22f5 at <hash>"
    )


def test_code_is_not_mistaken_for_a_secret():
    r = Redactor(known_secrets=[], home="/nonexistent", user="", host="")
    code = "tokens = torch.randint(0, vocab, (batch, seq))\nmax_tokens: int = 4096\nkey_states = self.wk(x)\n"
    assert r.scrub(code, "repro.py") == code and r.redactions == []
    leaked = r.scrub('api_key = "s3cr3t-value"\nHF_TOKEN=abcd1234efgh\n', "train.py")
    assert "s3cr3t-value" not in leaked and "abcd1234efgh" not in leaked


def test_signature_sees_through_compiler_wrappers():
    """The same bug wrapped by Dynamo (BackendCompilerFailed) or raised bare, or only as a LoweringException's
    text, has one root cause; a different error stays different."""
    import torch._dynamo.exc as dexc
    import torch._inductor.exc as iexc

    def wrapped(inner):
        try:
            try:
                raise inner
            except Exception as e:
                raise dexc.BackendCompilerFailed(lambda: None, e, None) from e
        except Exception as w:
            return w

    bare = ValueError("expected size 3 but got 4")
    via_dynamo = wrapped(ValueError("expected size 7 but got 8"))
    lowering = iexc.LoweringException(ValueError("expected size 1 but got 2"), "aten.relu", [], {})
    names = {sig.root_cause(e)[0] for e in (bare, via_dynamo, lowering)}
    messages = {sig.normalise_message(sig.root_cause(e)[1]) for e in (bare, via_dynamo, lowering)}
    assert names == {"ValueError"} and messages == {"expected size N but got N"}
    assert sig.root_cause(wrapped(KeyError("x")))[0] == "KeyError"


def test_signatures_with_one_root_cause_match_whatever_the_wrapper():
    wrapped = Signature(
        "exception",
        "BackendCompilerFailed",
        "backend='aot_eager' raised: ValueError: bad",
        "torch/_dynamo/x.py:f",
        cause="ValueError: bad @ torch/_refs/y.py:g",
    )
    bare = Signature(
        "exception", "ValueError", "bad", "torch/_refs/y.py:g", cause="ValueError: bad @ torch/_refs/y.py:g"
    )
    other = Signature(
        "exception", "ValueError", "bad", "torch/_refs/z.py:h", cause="ValueError: bad @ torch/_refs/z.py:h"
    )
    assert wrapped.matches(bare) and bare.matches(wrapped)
    assert not other.matches(bare)
    # a record written before causes were kept still compares as it always did
    assert Signature("exception", "ValueError", "bad", "torch/_refs/y.py:g").matches(bare)


def fake_tensor_call_failed(error: Exception) -> Exception:
    """Dynamo's TorchRuntimeError for an error its fake-tensor run of a call met, its text as torch 2.13 writes it
    (torch/_dynamo/utils.py, run_node's "got " + repr(e); raised `from None`, so only the text holds the error)."""
    from torch._dynamo.exc import TorchRuntimeError

    return TorchRuntimeError(
        "RuntimeError when making fake tensor call\n  Explanation: Dynamo failed to run FX node with fake tensors: "
        "call_function <built-in method tanh of type object at 0x7f8b4b2cea40>(*(FakeTensor(..., size=(4, 8), "
        f"grad_fn=<AddmmBackward0>),), **{{}}): got {error!r}\n  Hint: Your code may result in an error when "
        'running in eager.\n\nfrom user code:\n   File "case.py", line 43, in forward\n'
    )


def test_the_error_inside_dynamos_fake_tensor_wrapper_tells_two_failures_apart():
    """pytorch#139707's kernel calls .numpy() on a FakeTensor; pysource-minimize cut it to `0()`, a TypeError
    behind the same wrapper's same message, and the oracle took it for the bug (issue 50). The error inside is
    now part of the signature, normalised as messages are: the same error with other numbers is still the bug."""
    said, quoted = {}, {}
    for name, error in [
        ("bug", RuntimeError(".numpy() is not supported for tensor subclasses.")),
        ("zero", TypeError("'int' object is not callable")),
        ("plain", ValueError("expected size 3 but got 4")),
        ("other_size", ValueError("expected size 7 but got 8")),
    ]:
        name_, message, _ = sig.root_cause(fake_tensor_call_failed(error))
        said[name] = sig.wrapped_error(name_, message)
        quoted[name] = sig.wrapped_said(name_, message)
    assert said["bug"] == "RuntimeError: .numpy() is not supported for tensor subclasses."
    assert said["zero"] == "TypeError: 'int' object is not callable"
    assert said["plain"] == said["other_size"] == "ValueError: expected size N but got N"
    # what a report quotes keeps the numbers (Signature.inner_text, never compared)
    assert quoted["other_size"] == "ValueError: expected size 7 but got 8" and quoted["bug"] == said["bug"]
    # an exception that is no wrapper, or a wrapper whose text names no error, holds none
    assert sig.wrapped_error("RuntimeError", "got TypeError('x')") is None
    assert sig.wrapped_error("TorchRuntimeError", "tensor does not require grad and does not have a grad_fn") is None
    assert sig.wrapped_said("RuntimeError", "got TypeError('x')") == ""

    def signature(inner):
        cause = "TorchRuntimeError: RuntimeError when making fake tensor call @ torch/_dynamo/exc.py:unimplemented"
        return Signature(
            "exception", "TorchRuntimeError", "RuntimeError when making fake tensor call", None, cause, inner
        )

    bug, zero = signature(said["bug"]), signature(said["zero"])
    assert bug.matches(signature(said["bug"])) and not bug.matches(zero) and not zero.matches(bug)
    # what ISSUE.md says of a repro that gave the other one (report/issue_notes.py)
    assert zero.short_within() == (
        "TorchRuntimeError: RuntimeError when making fake tensor call (inside it: TypeError: 'int' object is not "
        "callable)"
    )
    # A journal or verdict written before the field: read without it, it compares as it always did.
    old = {k: v for k, v in bug.to_dict().items() if k != "inner"}
    assert Signature.from_dict(old).inner is None and Signature.from_dict(old).matches(bug)
    assert bug.matches(Signature.from_dict(old)) and zero.matches(Signature.from_dict(old))


def test_names_inductor_numbers_as_it_generates_them_do_not_tell_failures_apart():
    """pytorch/pytorch#196570 on torch 2.15: the whole graph failed with KeyError: 'buf4', every cut of it with
    'buf1'..'buf3', and minify refused all eight cuts as another failure (real messages from that run)."""
    whole = sig.normalise_message("KeyError: 'buf4'")
    assert [sig.normalise_message(f"KeyError: '{b}'") for b in ("buf1", "buf2", "buf3")] == [whole] * 3
    assert sig.normalise_message("cpp_fused_add_mul_0(arg0_1, primals_12)") == sig.normalise_message(
        "cpp_fused_add_mul_3(arg2_1, primals_4)"
    )
    # an op's name is no generated number: another kernel stays another failure
    assert sig.normalise_message("cpp_fused_relu_1 failed") != sig.normalise_message("cpp_fused_sigmoid_1 failed")
    assert sig.normalise_message("KeyError: 'buf4'") != sig.normalise_message("KeyError: 'primals_4'")


def test_a_compile_workers_error_is_the_cause_as_an_in_process_compile_of_it_would_say():
    """Inductor re-raises a compile worker's exception as SubprocException, holding only the worker's traceback
    text. On a GPU machine's cold start the original run met that wrapper and every later trial the error itself,
    and the lowering search named the wrong application (stop 43, the device). The cause is read from the text."""
    import importlib
    import os
    import traceback

    import torch

    worker_error = importlib.import_module("torch._inductor.compile_worker.subproc_pool").SubprocException
    try:
        torch.testing.assert_close(torch.ones(2), torch.zeros(2))
    except AssertionError as e:
        local, details = e, traceback.format_exc()
    name, message, inner = sig.root_cause(worker_error(details))
    assert (name, sig.normalise_message(message)) == ("AssertionError", sig.normalise_message(str(local)))
    root = os.path.dirname(torch.__file__)
    local_frames = [(f.filename, f.name) for f in traceback.extract_tb(local.__traceback__)]
    assert sig.innermost_torch_frame(sig.text_frames(inner), root) == sig.innermost_torch_frame(local_frames, root)
    assert sig.innermost_torch_frame(local_frames, root).startswith("torch/testing/")
