"""scripts/sass.py's reading of nvdisasm output (the disassembler itself is not in CI: a pip wheel developers add)."""
import importlib.util
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location("sass_script", Path(__file__).resolve().parent.parent / "scripts" / "sass.py")
sass = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(sass)

SAMPLE = """
        .section	.text._Z1kPf,"ax",@progbits
        .text._Z1kPf:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   HGMMA.64x64x8.F32.TF32 R24, gdesc[UR4], RZ, !UPT ;
        /*0020*/              @!P0 BRA `(.L_x_1) ;
        /*0030*/              @UP1 UMOV UR5, 0x8 ;
        /*0040*/                   UMOV UR7, 0x8 ;
        .text._Z1jPf:
        /*0000*/                   EXIT ;
"""


def test_opcode_counts_per_kernel_entry_with_predicates_and_modifiers_dropped():
    counts = sass.opcode_counts(SAMPLE)
    assert list(counts) == ["_Z1kPf", "_Z1jPf"]
    assert counts["_Z1kPf"] == {"LDC": 1, "HGMMA": 1, "BRA": 1, "UMOV": 2}
    assert counts["_Z1jPf"] == {"EXIT": 1}


def test_a_missing_disassembler_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.delenv("NVDISASM", raising=False)
    monkeypatch.setattr(sass.shutil, "which", lambda name: None)
    monkeypatch.setattr(sass.sys, "path", [str(tmp_path)])
    with pytest.raises(SystemExit, match="pip install nvidia-cuda-nvdisasm"):
        sass.find_nvdisasm()
