import pytest
import torch


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (run with `make gpu-test` on a GPU box)")


def pytest_collection_modifyitems(config, items):
    # the compile checks last: their nvcc builds run in the background meanwhile (test_kernels_compile.start_builds)
    builds = [item for item in items if item.fspath.basename == "test_kernels_compile.py"]
    items[:] = [item for item in items if item.fspath.basename != "test_kernels_compile.py"] + builds
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_collection_finish(session):
    """Start the registered builds' nvcc compiles as soon as it is known that a selected test needs them."""
    for item in session.items:
        if "ptxas" in getattr(item, "fixturenames", ()):
            item.module.start_builds()
            return


def _bad_input_cases(prob, args):
    """Every bad input of issue 6 that check_inputs must refuse, built on the device of `args` (x, weight,
    bias, param of a good call): [(exception, message pattern, {argument: bad value})]. The CPU test
    (test_registry) and the GPU test (test_gpu_kernels) add their device cases to this one list."""
    x, w = args["x"], args["weight"]
    dev, d = x.device, prob.dims
    small = list(prob.odd_shapes[0])
    small[-1] = 2
    fmt = torch.channels_last if d == 2 else torch.channels_last_3d
    return [
        (TypeError, "float32", dict(x=x.half())),
        (TypeError, "float32", dict(x=x.double())),
        (TypeError, "float32", dict(weight=w.double())),
        (ValueError, "non-contiguous", dict(x=x.transpose(-1, -2))),
        (ValueError, "channels_last", dict(x=x.contiguous(memory_format=fmt))),
        (ValueError, "-D", dict(x=x[0])),
        (ValueError, "kernel size", dict(x=prob.make_input(small, device=dev))),
        (ValueError, "in_channels", dict(x=x[:, :2].contiguous())),
        (ValueError, "weight of shape", dict(weight=torch.zeros((64, prob.in_channels) + (5,) * d, device=dev))),
        (ValueError, "bias", dict(bias=torch.zeros(63, device=dev))),
        (ValueError, "epilogue parameter", dict(param=torch.zeros((64,) + (2,) * d, device=dev))),
    ]


@pytest.fixture
def bad_input_cases():
    return _bad_input_cases
