"""PEP 517 build backend of the `onyxruntime` wheel (pyproject.toml at the repo root).

It drives the CMake build (only the `onyx_python` target when build/ is
configured, else scripts/build.sh), then packs the staged package
build/python/onyxruntime with libonyxruntime.so and every shared library it
loads that a clean Debian machine lacks (libprotobuf-lite, OpenBLAS and
gfortran, ICU, RE2, the image codecs, ...), each given RUNPATH $ORIGIN with
patchelf so the package directory is searched first and only the base system
(glibc, libstdc++, libgcc_s, zlib, xz, zstd) comes from the machine.

Standard library only, so `pip install .` and `pip wheel .` work offline
(`requires = []`: nothing to download into the isolated build environment).

Settings (environment, or pip's --config-settings KEY=VALUE):
  ONYX_BUILD_DIR / build-dir   the CMake build folder (default <repo>/build)
  ONYX_WHEEL_NO_BUILD=1 / no-build=1   pack the already built tree, build nothing
"""

import base64
import csv
import hashlib
import io
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
NAME = "onyxruntime"

# Sonames every Debian installation has (glibc, and what dpkg and apt need):
# loaded from the machine, never bundled.
SYSTEM_LIBS = re.compile(
    r"^(linux-vdso|linux-gate|ld-linux[-\w.]*|libc|libm|libdl|libpthread|librt|libutil|libresolv|libmvec"
    r"|libstdc\+\+|libgcc_s|libz|liblzma|libzstd)\.so(\.\d+)*$")


def _setting(config_settings, key, env):
    if config_settings and key in config_settings:
        return str(config_settings[key])
    return os.environ.get(env, "")


def _project():
    import tomllib  # Python >= 3.11 (Debian 12's)

    with open(ROOT / "pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    m = re.search(r"project\(\s*onyxruntime\s+VERSION\s+([\d.]+)", (ROOT / "CMakeLists.txt").read_text())
    if not m:
        raise RuntimeError("onyx_build_backend: no 'project(onyxruntime VERSION x.y.z' in CMakeLists.txt")
    project["version"] = m.group(1)
    return project


def _metadata(project):
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {project['version']}"]
    if "description" in project:
        lines.append(f"Summary: {project['description']}")
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    if "license" in project and "text" in project["license"]:
        lines.append(f"License: {project['license']['text']}")
    for dep in project.get("dependencies", []):
        lines.append(f"Requires-Dist: {dep}")
    for extra, deps in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        for dep in deps:
            requirement, _, condition = (s.strip() for s in dep.partition(";"))
            marker = f'extra == "{extra}"'
            lines.append(f"Requires-Dist: {requirement}; " + (f"({condition}) and {marker}" if condition else marker))
    readme = ROOT / "README.md"
    body = readme.read_text() if readme.exists() else ""
    lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + body


def _tag():
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    if not platform.startswith("linux"):
        raise RuntimeError(f"onyx_build_backend: only Linux wheels are built (this is {platform})")
    return f"py3-none-{platform}"


def _build(build_dir, config_settings):
    if _setting(config_settings, "no-build", "ONYX_WHEEL_NO_BUILD") not in ("", "0"):
        return
    cache = build_dir / "CMakeCache.txt"
    cmake = re.search(r"^CMAKE_COMMAND:INTERNAL=(.+)$", cache.read_text(), flags=re.M) if cache.exists() else None
    if cmake and ((build_dir / "build.ninja").exists() or (build_dir / "Makefile").exists()):
        # The CMake binary that configured the tree (the venv's `cmake` entry point would need the venv's
        # site-packages, which pip's isolated build environment hides).
        cmd = [cmake.group(1).strip(), "--build", str(build_dir), "--target", "onyx_python"]
    else:
        cmd = ["bash", str(ROOT / "scripts" / "build.sh")]
    # pip's isolated build environment reaches its children through these; the build wants the project venv.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONHOME")}
    env["ONYX_BUILD_DIR"] = str(build_dir)
    # Build output goes to stderr: pip shows it with -v, and a PEP 517 hook's stdout is not ours to fill.
    subprocess.run(cmd, check=True, env=env, stdout=sys.stderr)


def _dependencies(library):
    """(soname, path) of every library `library` loads that is not part of the base system."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    out = subprocess.run(["ldd", str(library)], check=True, capture_output=True, text=True, env=env).stdout
    found = []
    for line in out.splitlines():
        line = line.strip()
        m = re.match(r"(\S+)\s+=>\s+(.*?)\s*(\(0x[0-9a-f]+\))?$", line)
        if not m:
            continue
        soname, where = m.group(1), m.group(2)
        if SYSTEM_LIBS.match(soname):
            continue
        if where == "not found":
            raise RuntimeError(f"onyx_build_backend: {library.name} needs {soname}, which is not installed "
                               f"(run scripts/setup.sh)")
        found.append((soname, pathlib.Path(where)))
    return found


def _patchelf():
    tool = shutil.which("patchelf")
    if not tool:
        raise RuntimeError("onyx_build_backend: patchelf is needed to set RUNPATH $ORIGIN on the bundled "
                           "libraries (Debian package 'patchelf'; scripts/setup.sh installs it)")
    return tool


def _stage(build_dir, into):
    """Copies the staged package into `into`/onyxruntime with its libraries; returns the bundled sonames."""
    source = build_dir / "python" / NAME
    library = source / "libonyxruntime.so"
    if not library.exists():
        raise RuntimeError(f"onyx_build_backend: {library} is missing: build first (scripts/build.sh)")
    package = into / NAME
    shutil.copytree(source, package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    patchelf = _patchelf()
    bundled = []
    for soname, path in _dependencies(library):
        target = package / soname
        shutil.copyfile(path.resolve(), target)
        target.chmod(0o755)
        bundled.append(soname)
    # The CUDA provider library (built where the CUDA toolkit is) needs no
    # bundled library, but gets the same exact RUNPATH.
    providers = sorted(package.glob("libonyxruntime_providers_*.so"))
    for lib in [package / "libonyxruntime.so"] + providers + [package / s for s in bundled]:
        # Exactly $ORIGIN: the build's RUNPATH may carry an empty entry (= the current directory).
        subprocess.run([patchelf, "--set-rpath", "$ORIGIN", str(lib)], check=True)
    return bundled


def _record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _dist_info(project, tag, bundled):
    dist = f"{project['name']}-{project['version']}.dist-info"
    wheel = "\n".join(["Wheel-Version: 1.0", "Generator: onyx_build_backend", "Root-Is-Purelib: false",
                       f"Tag: {tag}", ""])
    note = ("Shared libraries bundled from Debian's packages (RUNPATH $ORIGIN), under their own licenses:\n" +
            "".join(f"  {s}\n" for s in bundled))
    return dist, {f"{dist}/METADATA": _metadata(project), f"{dist}/WHEEL": wheel,
                  f"{dist}/top_level.txt": NAME + "\n", f"{dist}/BUNDLED_LIBRARIES.txt": note}


def _write_wheel(path, tree, dist, extra):
    records = []
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for file in sorted(p for p in tree.rglob("*") if p.is_file()):
            arc = file.relative_to(tree).as_posix()
            data = file.read_bytes()
            info = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = ((0o755 if os.access(file, os.X_OK) else 0o644) | 0o100000) << 16
            zf.writestr(info, data)
            records.append((arc, _record_hash(data), str(len(data))))
        for arc, text in extra.items():
            data = text.encode()
            info = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o100644 << 16
            zf.writestr(info, data)
            records.append((arc, _record_hash(data), str(len(data))))
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerows(records)
        writer.writerow((f"{dist}/RECORD", "", ""))
        info = zipfile.ZipInfo(f"{dist}/RECORD", date_time=(2020, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o100644 << 16
        zf.writestr(info, buf.getvalue())


# ---- PEP 517 hooks ----------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    project = _project()
    dist, files = _dist_info(project, _tag(), [])
    for arc in (f"{dist}/METADATA", f"{dist}/WHEEL"):
        target = pathlib.Path(metadata_directory) / arc
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(files[arc])
    return dist


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    build_dir = pathlib.Path(_setting(config_settings, "build-dir", "ONYX_BUILD_DIR") or ROOT / "build").resolve()
    _build(build_dir, config_settings)
    tag = _tag()
    with tempfile.TemporaryDirectory(prefix="onyx-wheel-") as tmp:
        tree = pathlib.Path(tmp)
        bundled = _stage(build_dir, tree)
        dist, extra = _dist_info(project, tag, bundled)
        name = f"{project['name']}-{project['version']}-{tag}.whl"
        out = pathlib.Path(wheel_directory) / name
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_suffix(".whl.part")
        _write_wheel(partial, tree, dist, extra)
        os.replace(partial, out)
    return name
