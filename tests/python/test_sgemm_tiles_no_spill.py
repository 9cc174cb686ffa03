"""The SGEMM tiles keep their accumulators in registers.

GCC 12 once moved one of the AVX2 6x16 tile's 12 accumulators to the stack
(alpha and beta held registers through the k loop): every k step then did an
FMA with a stack operand and a store back, which halved the AVX2 path's
GEMM rate (62 instead of 123 GFLOP/s on 1024^3, Zen 5) with every result
still right. No test of values can see that, so this one reads the built
library's code: no FMA in any sgemm Tile<...> of either ISA may take a
%rsp-relative operand. Only for an optimized GCC build (other compilers and
-O0 place registers their own way)."""

import os
import pathlib
import re
import shutil
import subprocess

import pytest

import onyxruntime as rt

REPO = pathlib.Path(__file__).resolve().parents[2]
LIBRARY = pathlib.Path(os.environ.get("ONYX_PYTHONPATH", REPO / "build" / "python")) / "onyxruntime" / "libonyxruntime.so"
TILE = re.compile(r"onyx::sgemm::(avx2|avx512)::\(anonymous namespace\)::Tile<(\d+), (\d), (true|false)>")
STACK_FMA = re.compile(r"\bvfn?m(add|sub)\w*p[sd]\b.*\(%rsp\)")


def _tiles(lib):
    out = subprocess.run(["nm", "-C", "-S", str(lib)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        m = re.match(r"([0-9a-f]+) ([0-9a-f]+) [tT] (.*)$", line)
        if m and TILE.search(m.group(3)):
            yield int(m.group(1), 16), int(m.group(2), 16), m.group(3)


@pytest.mark.skipif(not all(shutil.which(t) for t in ("nm", "objdump")), reason="binutils not installed")
def test_no_sgemm_tile_fma_reads_the_stack():
    info = rt.get_build_info()
    if "build type=Release" not in info or "compiler=GNU" not in info:
        pytest.skip(f"register allocation checked for optimized GCC builds only: {info}")
    assert LIBRARY.exists(), LIBRARY
    tiles = list(_tiles(LIBRARY))
    # Both ISAs, every row count and form: AVX-512 rows 1-12, AVX2 rows 1-6, 3 forms, whole and half panels.
    assert len({name for _, _, name in tiles}) >= 100, f"only {len(tiles)} sgemm tiles found: symbols stripped?"
    spilled = {}
    for addr, size, name in tiles:
        code = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={addr}",
                               f"--stop-address={addr + size}", str(LIBRARY)],
                              capture_output=True, text=True, check=True).stdout
        hits = [l.strip() for l in code.splitlines() if STACK_FMA.search(l)]
        if hits:
            spilled[TILE.search(name).group(0)] = hits[:3]
    assert not spilled, f"sgemm tiles whose FMAs read the stack (an accumulator spilled): {spilled}"
