#!/usr/bin/env python3
"""Fails when an #include crosses the layers of ../shared/DESIGN.md the wrong way.

Layers, lowest first (a layer includes only itself and layers below it):
  core/framework  <  core/graph  <  providers  <  core/session, core/optimizer  <  capi/src
with two exceptions to "anything below": capi/src never includes providers/
(it asks core/session), and bindings/ include only the public header
(capi/include). Reads every #include line under capi/src, core, providers,
bindings; prints FILE:LINE: include "X" (layer A -> layer B) for each
violation and exits 1, or prints a one-line count and exits 0.
Usage: check_layers.py [repo root]
"""
import os
import re
import sys

SCANNED = ("capi/src", "core", "providers", "bindings")
EXTS = (".h", ".hpp", ".cc", ".cpp", ".c", ".cu", ".cuh", ".inl")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')

# Layer of a repo-relative path (of a file, or of what an include resolves to).
PREFIXES = [
    ("core/framework/", "framework"),
    ("core/graph/", "graph"),
    ("core/session/", "session"),
    ("core/optimizer/", "optimizer"),
    ("providers/", "providers"),
    ("capi/src/", "capi"),
    ("capi/include/", "public header"),
    ("bindings/", "bindings"),
]
ALLOWED = {
    "framework": {"framework"},
    "graph": {"framework", "graph"},
    "providers": {"framework", "graph", "providers"},
    "session": {"framework", "graph", "providers", "session", "optimizer"},
    "optimizer": {"framework", "graph", "providers", "session", "optimizer"},
    "capi": {"framework", "graph", "session", "optimizer", "capi", "public header"},
    "bindings": {"public header", "bindings"},
}


def layer_of(rel):
    for prefix, layer in PREFIXES:
        if rel.startswith(prefix):
            return layer
    return None


def resolve(root, including_dir, target):
    """Repo-relative path an include names, or None for a header outside the repo."""
    candidates = [os.path.join(including_dir, target), os.path.join(root, target),
                  os.path.join(root, "capi/include", target)]
    for c in candidates:
        if os.path.isfile(c):
            return os.path.relpath(os.path.realpath(c), os.path.realpath(root)).replace(os.sep, "/")
    # Not on disk (yet): judge by its spelling, so a wrong include cannot hide.
    if layer_of(target):
        return target
    if target.startswith("onyxruntime/"):
        return "capi/include/" + target
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    problems, seen = [], 0
    for top in SCANNED:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
            for name in sorted(filenames):
                if not name.endswith(EXTS):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                src_layer = layer_of(rel)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        seen += 1
                        target = resolve(root, dirpath, m.group(2))
                        dst_layer = layer_of(target) if target else None
                        if dst_layer is None or dst_layer in ALLOWED[src_layer]:
                            continue
                        problems.append(f'{rel}:{lineno}: #include "{m.group(2)}" ({src_layer} -> {dst_layer})')
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} include(s) cross the layers the wrong way (see ../shared/DESIGN.md, Layers)")
        return 1
    print(f"check_layers: {seen} includes read, none crosses the layers the wrong way")
    return 0


if __name__ == "__main__":
    sys.exit(main())
