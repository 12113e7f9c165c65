"""The two KernelBench level-2 problems, exactly as KernelBench defines them, plus test shapes.

This module is the one place that knows shapes: the full problem sizes (``get_inputs`` /
``get_init_inputs``, as in KernelBench's ``level2/54_*.py`` and ``level2/90_*.py``), the small odd
shapes the tests and the verification protocol use, and how to draw fresh inputs and parameters.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


# --- KernelBench level 2, problem 54 -------------------------------------------------------------
class Conv2dMultiplyLeakyGelu(nn.Module):
    """Conv2d -> x * multiplier -> LeakyReLU(0.01) -> GELU (KernelBench level2/54)."""
    EPILOGUE_PARAM = "multiplier"   # KernelBench's name of the epilogue's parameter

    def __init__(self, in_channels, out_channels, kernel_size, multiplier_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.multiplier = nn.Parameter(torch.randn(multiplier_shape))
        self.leaky_relu = nn.LeakyReLU()

    def forward(self, x):
        x = self.conv(x)
        x = x * self.multiplier
        x = self.leaky_relu(x)
        x = F.gelu(x)
        return x

    def epilogue_param(self) -> torch.Tensor:
        return getattr(self, self.EPILOGUE_PARAM)


# --- KernelBench level 2, problem 90 -------------------------------------------------------------
class Conv3dLeakySumClampGelu(nn.Module):
    """Conv3d -> leaky_relu(0.2) -> + sum_tensor -> clamp(-1, 1) -> GELU (KernelBench level2/90)."""
    EPILOGUE_PARAM = "sum_tensor"

    def __init__(self, in_channels, out_channels, kernel_size, sum_tensor_shape):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.sum_tensor = nn.Parameter(torch.randn(sum_tensor_shape))

    def forward(self, x):
        x = self.conv(x)
        x = F.leaky_relu(x, negative_slope=0.2)
        x = x + self.sum_tensor
        x = torch.clamp(x, min=-1.0, max=1.0)
        x = F.gelu(x)
        return x

    def epilogue_param(self) -> torch.Tensor:
        return getattr(self, self.EPILOGUE_PARAM)


@dataclass(frozen=True)
class Problem:
    key: str
    kernelbench_id: str
    model_cls: type
    init_inputs: tuple      # KernelBench get_init_inputs()
    input_shape: tuple      # KernelBench get_inputs()[0].shape
    odd_shapes: tuple       # small input shapes: odd batch, planes no multiple of any tile/vector width
    description: str
    model_slice: tuple = () # one image of the full problem, for CPU models of the precisions (splits.py)
    bitwise_shapes: tuple = ()  # more shapes on which `check_variant.py --bitwise` compares a candidate bit for bit
    sanitize_shapes: tuple = ()  # small shapes that compute-sanitizer runs besides odd_shapes: paths they miss

    @property
    def dims(self) -> int:
        return len(self.input_shape) - 2

    @property
    def in_channels(self) -> int:
        return self.init_inputs[0]

    @property
    def out_channels(self) -> int:
        return self.init_inputs[1]

    @property
    def kernel_size(self) -> int:
        return self.init_inputs[2]

    def output_shape(self, input_shape=None) -> tuple:
        shape = tuple(input_shape or self.input_shape)
        k = self.kernel_size
        return (shape[0], self.out_channels) + tuple(s - k + 1 for s in shape[2:])

    def make_model(self, seed: int | None = None, device="cpu", dtype=torch.float32) -> nn.Module:
        """A fresh model with KernelBench's default initialisation, drawn from `seed`."""
        if seed is not None:
            torch.manual_seed(seed)
        return self.model_cls(*self.init_inputs).to(device=device, dtype=dtype)

    def make_input(self, shape=None, seed: int = 0, dist: str = "rand", device="cpu") -> torch.Tensor:
        """Draw an input as KernelBench does (`rand`, in [0, 1)) or with negative values (`randn`)."""
        shape = tuple(shape or self.input_shape)
        gen = torch.Generator(device=device).manual_seed(seed)
        if dist == "rand":
            return torch.rand(shape, generator=gen, device=device)
        if dist == "randn":
            return torch.randn(shape, generator=gen, device=device)
        raise ValueError(f"unknown input distribution {dist!r}; use 'rand' or 'randn'")


CONV2D = Problem(
    key="conv2d",
    kernelbench_id="level2/54_Conv2d_Multiply_LeakyReLU_GELU",
    model_cls=Conv2dMultiplyLeakyGelu,
    init_inputs=(64, 64, 3, (64, 1, 1)),
    input_shape=(64, 64, 256, 256),
    # output planes 37x53, 4x67, 17x128, 19x90: odd batches, planes that are no multiple of a tile or float4;
    # the last has input rows of a multiple of 16 bytes (W = 92), the only shape besides the full one where
    # 04c's TMA copies run, with boxes past the image's right and bottom edges
    odd_shapes=((1, 64, 39, 55), (3, 64, 6, 69), (2, 64, 19, 130), (1, 64, 21, 92)),
    # 04c's bulk stores: a last tile of 2 columns in planes at one 16-byte phase; three whole tiles per
    # row and an odd row count in planes of alternating phase; the TMA copies with two output rows
    bitwise_shapes=((2, 64, 10, 176), (1, 64, 7, 260), (3, 64, 4, 92)),
    # the bulk stores' rows at alternating phases and a last tile of 4 columns, with the TMA copies: where the special
    # values' FP32 path meets the warp-collective store (tests/test_gpu_hardening.py), and the sanitizers
    sanitize_shapes=((1, 64, 7, 92),),
    description="Conv2d(64->64, k=3) -> x*multiplier -> LeakyReLU(0.01) -> GELU",
    model_slice=(1, 64, 256, 256),
)

CONV3D = Problem(
    key="conv3d",
    kernelbench_id="level2/90_Conv3d_LeakyReLU_Sum_Clamp_GELU",
    model_cls=Conv3dLeakySumClampGelu,
    init_inputs=(8, 64, 3, (64, 1, 1, 1)),
    input_shape=(128, 8, 16, 64, 64),
    # output 5x37x53, 3x17x9, 2x8x69
    odd_shapes=((1, 8, 7, 39, 55), (3, 8, 5, 19, 11), (2, 8, 4, 10, 71)),
    description="Conv3d(8->64, k=3) -> leaky_relu(0.2) -> +sum_tensor -> clamp(-1,1) -> GELU",
    model_slice=(1, 8, 16, 64, 64),
    # three column tiles (one starting at a column no multiple of 4), two, one output row per plane, one full-width
    # tile, five images of 2x18 outputs: where 04b's lean loop, row ring and turns take their other paths
    # and whole 62-pixel rows (W = 64) in planes of 8 x 62 rows (three rounds of tiles on 132 SMs), 4 x 8 and 2 x 3:
    # 04b's group stores in every round but the last, in one round, in none with groups of 4;
    # 2x5x18 outputs from 20-pixel rows: the FP16 build's input windows with columns past the input and rounds that
    # cross planes; 2x6x62 outputs: the TF32 build's depth sweep with a last group of rows that overlaps the one before
    # (Ho = 6; an odd Ho takes the plain loop)
    bitwise_shapes=((2, 8, 5, 10, 132), (1, 8, 4, 9, 68), (3, 8, 3, 3, 8), (1, 8, 3, 5, 64), (5, 8, 3, 4, 20),
                    (3, 8, 10, 64, 64), (2, 8, 6, 10, 64), (2, 8, 4, 5, 64), (2, 8, 4, 7, 20), (3, 8, 4, 8, 64)),
    # output 2x7x66: odd_shapes' widths are all odd, so 04b's bulk and tensor-copy stores (even widths, full 62-pixel
    # tiles, rows starting at both 16-byte phases) would never run under the sanitizer; output 4x8x62: nor would its
    # group stores (whole rows, Do * Ho a multiple of 4); output 2x5x18: the FP16 build's input windows across planes
    sanitize_shapes=((1, 8, 4, 9, 68), (2, 8, 6, 10, 64), (2, 8, 4, 7, 20)),
)

PROBLEMS = {p.key: p for p in (CONV2D, CONV3D)}


def get(key: str) -> Problem:
    try:
        return PROBLEMS[key]
    except KeyError:
        raise ValueError(f"unknown problem {key!r}; known: {', '.join(PROBLEMS)}") from None


def conv_params(model: nn.Module):
    """(weight, bias, epilogue parameter) — what every variant takes besides the input."""
    return model.conv.weight, model.conv.bias, model.epilogue_param()


@torch.no_grad()
def ground_truth(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """The model evaluated in float64 with the same parameters, on the input upcast to float64."""
    ref = _float64_copy(model)
    return ref(x.double())


def _float64_copy(model: nn.Module) -> nn.Module:
    import copy

    return copy.deepcopy(model).double()


@torch.no_grad()
def eager_conv(problem: Problem, x, weight, bias):
    conv = F.conv2d if problem.dims == 2 else F.conv3d
    return conv(x, weight, bias)
