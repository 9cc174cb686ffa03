"""Writes the cffi FFI of the public C header as a Python module (cffi's
out-of-line ABI mode): the cdef is parsed here, at build time, so importing
onyxruntime neither imports pycparser nor parses the header (~70 ms of CPU
per import).

usage: build_abi_ffi.py CDEF_HEADER OUTPUT_PY
"""

import sys

import cffi


def main(cdef_path, out_path):
    ffi = cffi.FFI()
    with open(cdef_path, encoding="utf-8") as f:
        ffi.cdef(f.read())
    ffi.set_source("_onyx_abi_ffi", None)
    ffi.emit_python_code(out_path)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
