"""The family: KernelBench level-2 models of one shape, a conv (2-D or 3-D, k=3, stride 1, no padding) and
elementwise ops after it, sometimes a reduction over channels.

Copied verbatim from public KernelBench, repository ScalingIntelligence/KernelBench at commit
423217d9fda91e0c2d67e4a43bf62f96f6d104f1 (2026-03-05; every file below was last changed in 6b1cea28ddea),
paths ``KernelBench/level2/<N>_<Name>.py``. Each file's class is called ``Model`` there; here it takes the file's
name (one module holds seven), and each body -- ``__init__`` and ``forward`` -- is as there, docstrings included.
The shape constants and ``get_inputs`` / ``get_init_inputs`` are the file's, written as each problem's
``init_inputs`` and ``input_shape`` (``torch.rand`` of that shape, as KernelBench draws it: Problem.make_input).

Problems 54 and 90 are the study's two, with their models and shapes in convfuse/problems.py (one place for each
fact); FAMILY lists them beside the seven, in KernelBench's numbering.
"""
from __future__ import annotations

import torch
import torch.nn as nn

from .. import problems as P


# --- level2/1_Conv2D_ReLU_BiasAdd.py ----------------------------------------------------------------
class Conv2D_ReLU_BiasAdd(nn.Module):
    """
    Simple model that performs a convolution, applies ReLU, and adds a bias term.
    """
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super(Conv2D_ReLU_BiasAdd, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.conv(x)
        x = torch.relu(x)
        x = x + self.bias
        return x


# --- level2/4_Conv2d_Mish_Mish.py -------------------------------------------------------------------
class Conv2d_Mish_Mish(nn.Module):
    """
    Simple model that performs a convolution, applies Mish, and another Mish.
    """
    def __init__(self, in_channels, out_channels, kernel_size):
        super(Conv2d_Mish_Mish, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = torch.nn.functional.mish(x)
        x = torch.nn.functional.mish(x)
        return x


# --- level2/57_Conv2d_ReLU_HardSwish.py -------------------------------------------------------------
class Conv2d_ReLU_HardSwish(nn.Module):
    """
    Simple model that performs a convolution, applies ReLU, and applies HardSwish activation.
    """
    def __init__(self, in_channels, out_channels, kernel_size):
        super(Conv2d_ReLU_HardSwish, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = torch.relu(x)
        x = x * torch.clamp((x + 3) / 6, 0, 1)
        return x


# --- level2/71_Conv2d_Divide_LeakyReLU.py -----------------------------------------------------------
class Conv2d_Divide_LeakyReLU(nn.Module):
    """
    Simple model that performs a convolution, divides by a constant, and applies LeakyReLU.
    """
    def __init__(self, in_channels, out_channels, kernel_size, divisor):
        super(Conv2d_Divide_LeakyReLU, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.divisor = divisor

    def forward(self, x):
        x = self.conv(x)
        x = x / self.divisor
        x = torch.nn.functional.leaky_relu(x, negative_slope=0.01)
        return x


# --- level2/7_Conv3d_ReLU_LeakyReLU_GELU_Sigmoid_BiasAdd.py -----------------------------------------
class Conv3d_ReLU_LeakyReLU_GELU_Sigmoid_BiasAdd(nn.Module):
    """
    Model that performs a 3D convolution, applies ReLU, LeakyReLU, GELU, Sigmoid activations, and bias in sequence.
    """
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super(Conv3d_ReLU_LeakyReLU_GELU_Sigmoid_BiasAdd, self).__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.conv(x)
        x = torch.relu(x)
        x = torch.nn.functional.leaky_relu(x, negative_slope=0.01)
        x = torch.nn.functional.gelu(x)
        x = torch.sigmoid(x)
        x = x + self.bias
        return x


# --- level2/48_Conv3d_Scaling_Tanh_Multiply_Sigmoid.py ----------------------------------------------
class Conv3d_Scaling_Tanh_Multiply_Sigmoid(nn.Module):
    """
    Model that performs a 3D convolution, scales the output, applies tanh, multiplies by a scaling factor, and applies sigmoid.
    """
    def __init__(self, in_channels, out_channels, kernel_size, scaling_factor, bias_shape):
        super(Conv3d_Scaling_Tanh_Multiply_Sigmoid, self).__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.scaling_factor = nn.Parameter(torch.randn(bias_shape))
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.conv(x)
        x = x * self.scaling_factor
        x = torch.tanh(x)
        x = x * self.bias
        x = torch.sigmoid(x)
        return x


# --- level2/32_Conv2d_Scaling_Min.py ----------------------------------------------------------------
class Conv2d_Scaling_Min(nn.Module):
    """
    Model that performs a convolution, scales the output, and then applies a minimum operation.
    """
    def __init__(self, in_channels, out_channels, kernel_size, scale_factor):
        super(Conv2d_Scaling_Min, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        """
        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, in_channels, height, width).
        Returns:
            torch.Tensor: Output tensor of shape (batch_size, out_channels, height, width).
        """
        x = self.conv(x)
        x = x * self.scale_factor
        x = torch.min(x, dim=1, keepdim=True)[0]  # Minimum along channel dimension
        return x


def _odd_shapes(in_channels: int, dims: int) -> tuple:
    """The verification protocol's odd shapes (convfuse/problems.py's, for any Cin): batches 1 and 3, output planes
    37x53, 4x67 and 17x128 (no multiple of any tile or vector width), 3-D depths 5 and 3."""
    if dims == 2:
        return ((1, in_channels, 39, 55), (3, in_channels, 6, 69), (2, in_channels, 19, 130))
    return ((1, in_channels, 7, 39, 55), (3, in_channels, 5, 19, 11), (2, in_channels, 4, 10, 71))


def _problem(number: int, name: str, model_cls, init_inputs: tuple, input_shape: tuple, description: str):
    dims = len(input_shape) - 2
    return P.Problem(key=f"kb{number}", kernelbench_id=f"level2/{number}_{name}", model_cls=model_cls,
                     init_inputs=init_inputs, input_shape=input_shape,
                     odd_shapes=_odd_shapes(init_inputs[0], dims), description=description)


# KernelBench's constants, per file: batch_size, in_channels, out_channels, (depth,) height, width, kernel_size,
# then the file's own (bias_shape, divisor, scaling_factor, scale_factor), in get_init_inputs' order.
_SEVEN = (
    _problem(1, "Conv2D_ReLU_BiasAdd", Conv2D_ReLU_BiasAdd, (64, 128, 3, (128, 1, 1)), (128, 64, 128, 128),
             "Conv2d(64->128) -> relu -> + bias"),
    _problem(4, "Conv2d_Mish_Mish", Conv2d_Mish_Mish, (64, 128, 3), (64, 64, 256, 256),
             "Conv2d(64->128) -> mish -> mish"),
    _problem(7, "Conv3d_ReLU_LeakyReLU_GELU_Sigmoid_BiasAdd", Conv3d_ReLU_LeakyReLU_GELU_Sigmoid_BiasAdd,
             (8, 32, 3, (32, 1, 1, 1)), (64, 8, 32, 64, 64),
             "Conv3d(8->32) -> relu -> leaky_relu(0.01) -> gelu -> sigmoid -> + bias"),
    _problem(32, "Conv2d_Scaling_Min", Conv2d_Scaling_Min, (64, 128, 3, 2.0), (64, 64, 256, 256),
             "Conv2d(64->128) -> * 2.0 -> min over channels (keepdim)"),
    _problem(48, "Conv3d_Scaling_Tanh_Multiply_Sigmoid", Conv3d_Scaling_Tanh_Multiply_Sigmoid,
             (3, 16, 3, 2, (16, 1, 1, 1)), (128, 3, 16, 64, 64),
             "Conv3d(3->16) -> * scale -> tanh -> * bias -> sigmoid"),
    _problem(57, "Conv2d_ReLU_HardSwish", Conv2d_ReLU_HardSwish, (8, 64, 3), (128, 8, 128, 128),
             "Conv2d(8->64) -> relu -> x * clamp((x + 3) / 6, 0, 1)"),
    _problem(71, "Conv2d_Divide_LeakyReLU", Conv2d_Divide_LeakyReLU, (8, 64, 3, 2), (128, 8, 128, 128),
             "Conv2d(8->64) -> / 2 -> leaky_relu(0.01)"),
)

# The nine, keyed "kb<N>" by KernelBench number; 54 and 90 are the study's own Problem objects.
FAMILY = {p.key: p for p in sorted(_SEVEN + (P.CONV2D, P.CONV3D), key=lambda p: int(p.kernelbench_id.split("/")[1].split("_")[0]))}


def kernelbench_number(problem: P.Problem) -> int:
    return int(problem.kernelbench_id.split("/")[1].split("_")[0])


def get(key: str) -> P.Problem:
    """A family problem by its key ("kb1", "conv2d", ...) or KernelBench number ("1", "54")."""
    for p in FAMILY.values():
        if key in (p.key, str(kernelbench_number(p))):
            return p
    raise ValueError(f"unknown family problem {key!r}; known: {', '.join(FAMILY)}")
