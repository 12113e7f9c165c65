"""pyproject.toml and requirements.txt say the same (one list, two readers: pip install . and make venv), with
NVIDIA's tool wheels only where NVIDIA ships them, at the release that wrote the record's SASS keys; the Makefile's
torch satisfies the package's floor.

The macOS check of README.md's Dependencies: requirements.txt's lines that these markers keep for macOS on arm64 were
downloaded as wheels for that platform (`pip download --only-binary=:all: --platform macosx_14_0_arm64
--python-version 3.11 --no-deps`, all found, 2026-12-07); pip evaluates markers for the machine it runs on, not for
--platform, hence the evaluation here."""
import json
import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent

MACOS = {"sys_platform": "darwin", "platform_machine": "arm64", "platform_system": "Darwin"}
LINUX_X86 = {"sys_platform": "linux", "platform_machine": "x86_64", "platform_system": "Linux"}
LINUX_ARM = {"sys_platform": "linux", "platform_machine": "aarch64", "platform_system": "Linux"}
WINDOWS = {"sys_platform": "win32", "platform_machine": "AMD64", "platform_system": "Windows"}


def _key(r: Requirement):
    return r.name.lower(), str(r.specifier), str(r.marker) if r.marker else None


def pyproject_requirements() -> set:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = [Requirement(s) for s in project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        reqs += [Requirement(s) for s in extra if not s.startswith("convfuse[")]
    return {_key(r) for r in reqs}


def requirements_txt() -> set:
    lines = [ln.split("#")[0].strip() for ln in (ROOT / "requirements.txt").read_text().splitlines()]
    return {_key(Requirement(ln)) for ln in lines if ln}


def test_requirements_txt_is_pyprojects_list():
    assert requirements_txt() == pyproject_requirements()


def test_nvidia_tool_wheels_only_where_nvidia_ships_them():
    reqs = [Requirement(ln.split("#")[0]) for ln in (ROOT / "requirements.txt").read_text().splitlines()
            if ln.split("#")[0].strip()]
    nvidia = [r for r in reqs if r.name.startswith("nvidia-")]
    assert {r.name for r in nvidia} == {"nvidia-cuda-cuobjdump", "nvidia-cuda-nvdisasm"}
    for r in nvidia:
        assert r.marker.evaluate(LINUX_X86) and r.marker.evaluate(LINUX_ARM)
        assert not r.marker.evaluate(MACOS) and not r.marker.evaluate(WINDOWS)
    for r in reqs:          # everything else everywhere
        assert r in nvidia or r.marker is None or r.marker.evaluate(MACOS)


def test_the_tool_wheels_are_pinned_to_a_release_that_wrote_the_records_sass_keys():
    versions = set()

    def walk(o):
        if isinstance(o, dict):
            if isinstance(o.get("cuobjdump"), str) and "sass" in o:
                versions.add(o["cuobjdump"])
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    for path in (ROOT / "results").glob("*.json"):
        walk(json.loads(path.read_text()))
    pins = {str(r.specifier) for name, spec, _ in requirements_txt() if name.startswith("nvidia-")
            for r in [Requirement(f"{name}{spec}")]}
    assert len(pins) == 1
    (pin,) = pins
    assert pin.startswith("==") and pin[2:] in versions, (pin, versions)


def test_one_torch_policy():
    floor = {spec for name, spec, _ in pyproject_requirements() if name == "torch"}
    assert floor == {">=2.4"}
    make_torch = re.search(r"^TORCH \?= (\S+)", (ROOT / "Makefile").read_text(), re.M).group(1)
    tested = Requirement(make_torch)
    assert tested.name == "torch" and str(tested.specifier).startswith("==")
    assert Requirement("torch>=2.4").specifier.contains(str(tested.specifier)[2:])
    readme = (ROOT / "README.md").read_text()
    assert "torch>=2.4" in readme and make_torch in readme
