"""Matrix equation solvers (PyTensor's ``pytensor.tensor.linalg.solvers``): Sylvester,
Lyapunov and the discrete algebraic Riccati equation."""
