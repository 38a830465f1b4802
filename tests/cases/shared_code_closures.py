# EXPECT = {"failing_stage": "eager", "kinds": ["exception"], "plain_run": True}
# A failure reprokit's own instrumentation hides (issue 45, item 6). Two closures from one factory share a code
# object; each is wrapped by its own torch.compile call. Run as written, both calls get equal backends
# (torch.compile's inductor wrappers compare equal), so Dynamo's cache entry for the shared code object serves the
# second closure too, and with the closure cell unguarded it reuses the first closure's graph: x * 2 where x * 3 is
# due. Under reprokit each call's backend is its own router, the cache entry does not match, the second closure
# compiles its own graph and the script passes.
# The genuine bug (torch 2.15: the captured cell is not guarded) is planted here on torch 2.13, which guards the
# cell, through torch's own guard filter that keeps tensor guards only: the same unguarded cell, the same reuse.
import torch


def make(scale):
    def scaled(x):
        return x * scale

    return scaled


options = {"guard_filter_fn": torch.compiler.keep_tensor_guards_unsafe}
double = torch.compile(make(2.0), options=options)
triple = torch.compile(make(3.0), options=options)
x = torch.ones(4)
assert torch.equal(double(x), x * 2.0)
assert torch.equal(triple(x), x * 3.0), triple(x)
print("ok")
