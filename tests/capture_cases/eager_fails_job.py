# A job that fails without compile too: the matrix is not positive-definite, so cholesky raises eagerly and
# compiled alike (aot_eager, the job's backend, and inductor call aten's own kernel for it).
import torch

f = torch.compile(lambda a: torch.linalg.cholesky(a @ a.mT - 4 * torch.eye(4)), backend="aot_eager")
print(f(torch.eye(4)))
