# The planted relu bug passed in torch.compile's own options, not set on inductor's config: the graph trials that
# count torch's lowerings must compile with the script's options too.
import torch

f = torch.compile(lambda x: torch.relu(x) + 1, options={"cpp.inject_relu_bug_TESTING_ONLY": "compile_error"})
print(f(torch.randn(8)))
