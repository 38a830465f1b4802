# A job that fails without compile too: the matrix is not positive-definite, so cholesky raises eagerly and
# compiled alike (inductor calls aten's own kernel for it).
import torch

f = torch.compile(lambda a: torch.linalg.cholesky(a @ a.mT - 4 * torch.eye(4)))
print(f(torch.eye(4)))
