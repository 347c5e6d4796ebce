"""Matrix decompositions (PyTensor's ``pytensor.tensor.linalg.decomposition``): LU, the
eigenvalues of Hermitian matrices, and the Schur and QZ forms."""
