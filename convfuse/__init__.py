"""convfuse: fusing a convolution with its elementwise epilogue on NVIDIA GPUs — the package the
study's notebooks and tests stand on. See README.md."""
__version__ = "0.1.0"
