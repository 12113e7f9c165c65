"""convfuse: fusing a convolution with its elementwise epilogue on NVIDIA GPUs — the package the
study's notebooks and tests stand on, and a library: ``convfuse.fuse(model)`` and the ``torch.ops.convfuse.*``
operators (convfuse/ops.py). See README.md."""
__version__ = "0.1.0"

# The library face loads on first use: the study's modules (and `make report` on a machine without a GPU) import the
# package without registering operators.
_LAZY = {"fuse": "ops", "FusedConv": "ops", "Unsupported": "ops", "ops": None}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'convfuse' has no attribute {name!r}")
    import importlib

    ops = importlib.import_module(".ops", __name__)
    return ops if _LAZY[name] is None else getattr(ops, name)
