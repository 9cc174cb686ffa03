#!/usr/bin/env python3
"""Checks the C ABI against its baselines.

1. libonyxruntime.so exports exactly the symbols in exported_symbols.txt.
2. The public header keeps every promise of every shipped API version
   (onyx_api_v<N>.txt, one fact a line, written by --dump):
     api <slot> <Name>: <signature>      OnyxApi slot, name, return and parameter types
     apibase <slot> <Name>: <signature>  the same for OnyxApiBase
     enum <Enum> <NAME> = <value>        an enumerator keeps its value (enums only grow)
     struct <Struct> <index>: <member>   a public struct's member, in order
     struct <Struct> members <count>     ... and their count (structs passed in
                                         caller arrays cannot grow)
     typedef <Name>: <signature>         a function-pointer type
   Signatures are normalised (whitespace, parameter names dropped), so renaming
   a parameter passes and changing a type, the order, or a slot fails. New
   entries and enumerators may be appended, but only under a new
   ONYX_API_VERSION, and the baseline of the header's ONYX_API_VERSION must
   describe the header exactly (regenerate it with --dump while that version
   is in development; never edit a shipped one).
   (api_offsets.c checks the slots at compile time too.)

Usage: check_abi.py [--header H] [LIBRARY]   check (without LIBRARY: the header only)
       check_abi.py [--header H] --dump      print the header's facts (a new baseline)
"""
import argparse
import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
HEADER = HERE.parent / "capi" / "include" / "onyxruntime" / "onyxruntime_c_api.h"

# Words that are part of a type, never a parameter's name.
_TYPE_WORDS = {"const", "volatile", "struct", "enum", "unsigned", "signed", "char", "short", "int", "long",
               "float", "double", "void", "_Bool"}
_TOKEN = re.compile(r"[A-Za-z_]\w*|\.\.\.|[*()\[\],]|\d+")


class HeaderError(Exception):
    pass


def _strip(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))


def _join(tokens):
    out = ""
    for t in tokens:
        if out and not (t in "*,)]" or out[-1] in "(["):
            out += " "
        out += t
    return out


def _split_top(text, sep=","):
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts]


def _is_type_word(word, typedefs):
    return word in _TYPE_WORDS or word in typedefs or word.endswith("_t")


def _param_type(param, typedefs):
    """A parameter declaration without its name: 'const char* key' -> 'const char*'."""
    fn = re.fullmatch(r"(.*)\(\s*\*\s*(\w*)\s*\)\s*\((.*)\)", param, flags=re.S)
    if fn:  # a function pointer parameter: keep its type, drop its name
        return f"{_type(fn.group(1))}(*)({_params(fn.group(3), typedefs)})"
    tokens = _TOKEN.findall(param)
    if not tokens:
        raise HeaderError(f"cannot read parameter '{param}'")
    suffix = []
    while tokens and tokens[-1] == "]":  # arrays: 'int64_t dims[4]'
        i = len(tokens) - 1 - tokens[::-1].index("[")
        suffix = tokens[i:] + suffix
        tokens = tokens[:i]
    if len(tokens) > 1 and re.fullmatch(r"[A-Za-z_]\w*", tokens[-1]) and not _is_type_word(tokens[-1], typedefs):
        tokens = tokens[:-1]
    return _join(tokens + suffix)


def _type(text):
    return _join(_TOKEN.findall(text))


def _params(text, typedefs):
    text = text.strip()
    if text in ("", "void"):
        return "void"
    return ", ".join(_param_type(p, typedefs) for p in _split_top(text))


def _function_member(decl, typedefs):
    """'OnyxStatus* (*Name)(const X* x, int y)' -> ('Name', 'OnyxStatus*(const X*, int)')."""
    m = re.fullmatch(r"(.*?)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)", decl, flags=re.S)
    if not m:
        raise HeaderError(f"not a function pointer: '{' '.join(decl.split())}'")
    return m.group(2), f"{_type(m.group(1))}({_params(m.group(3), typedefs)})"


def header_facts(path):
    """Every ABI promise the header makes, as ordered lines (see the module doc)."""
    raw = pathlib.Path(path).read_text()
    text = _strip(raw)
    version = re.search(r"#define\s+ONYX_API_VERSION\s+(\d+)", raw)
    if not version:
        raise HeaderError("no '#define ONYX_API_VERSION N' in the header")
    typedefs = set(re.findall(r"typedef\s+(?:struct|enum)\s+\w+\s+(\w+)\s*;", text))
    typedefs |= set(re.findall(r"}\s*(\w+)\s*;", text))
    typedefs |= set(re.findall(r"typedef[^;{}]*\(\s*\*\s*(\w+)\s*\)", text))
    facts = []
    for m in re.finditer(r"typedef\s+enum\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", text, flags=re.S):
        value = -1
        for item in _split_top(m.group(2)):
            if not item:
                continue
            name, _, expr = (s.strip() for s in item.partition("="))
            if expr:
                try:
                    value = int(expr, 0)
                except ValueError:
                    raise HeaderError(f"enum {m.group(3)}: cannot read the value of {name} ('{expr}')")
            else:
                value += 1
            facts.append(f"enum {m.group(3)} {name} = {value}")
    for m in re.finditer(r"typedef\s+([^;{}]*?)\(\s*\*\s*(\w+)\s*\)\s*\(([^;{}]*)\)\s*;", text, flags=re.S):
        facts.append(f"typedef {m.group(2)}: {_type(m.group(1))}(*)({_params(m.group(3), typedefs)})")
    tables = {"OnyxApi": "api", "OnyxApiBase": "apibase"}
    seen_tables = set()
    for m in re.finditer(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", text, flags=re.S):
        name = m.group(3)
        members = [d.strip() for d in m.group(2).split(";") if d.strip()]
        if name in tables:
            seen_tables.add(name)
            for slot, decl in enumerate(members):
                entry, sig = _function_member(decl, typedefs)
                facts.append(f"{tables[name]} {slot} {entry}: {sig}")
        else:
            for i, decl in enumerate(members):
                if "(" in decl:
                    member, sig = _function_member(decl, typedefs)
                    facts.append(f"struct {name} {i}: {sig.replace('(', '(*)(', 1)} {member}")
                else:
                    tokens = _TOKEN.findall(decl)
                    facts.append(f"struct {name} {i}: {_join(tokens)}")
            facts.append(f"struct {name} members {len(members)}")
    for table in tables:
        if table not in seen_tables:
            raise HeaderError(f"no 'typedef struct {table} {{ ... }} {table};' in the header")
    return int(version.group(1)), facts


def read_baseline(path):
    return [l.strip() for l in path.read_text().splitlines() if l.strip() and not l.startswith("#")]


def baselines(directory=HERE):
    found = {}
    for path in directory.glob("onyx_api_v*.txt"):
        m = re.fullmatch(r"onyx_api_v(\d+)\.txt", path.name)
        if m:
            found[int(m.group(1))] = path
    return dict(sorted(found.items()))


def _key(fact):
    """What a fact is about (its subject), to report 'changed' rather than 'missing'."""
    head = fact.split(":", 1)[0].split(" = ", 1)[0]
    parts = head.split()
    if parts[0] in ("api", "apibase"):
        return " ".join(parts[:2])  # the slot
    if parts[0] == "struct" and parts[2] == "members":
        return " ".join(parts[:3])
    return head


def check_header(header=HEADER, directory=HERE):
    """Error lines (empty when the header keeps every baseline's promises)."""
    errors = []
    try:
        version, facts = header_facts(header)
    except HeaderError as e:
        return [f"{header}: {e}"]
    current = set(facts)
    by_key = {_key(f): f for f in facts}
    shipped = baselines(directory)
    if not shipped:
        return [f"no onyx_api_v*.txt baselines in {directory}"]
    for v, path in shipped.items():
        for fact in read_baseline(path):
            if fact in current:
                continue
            now = by_key.get(_key(fact))
            if now:
                errors.append(f"{path.name}: '{fact}' changed: the header now has '{now}'")
            else:
                errors.append(f"{path.name}: '{fact}' is gone from the header")
    if version not in shipped:
        errors.append(f"the header says ONYX_API_VERSION {version} but abi_checks has no onyx_api_v{version}.txt "
                      f"(write it with: check_abi.py --dump > abi_checks/onyx_api_v{version}.txt)")
    else:
        latest = set(read_baseline(shipped[version]))
        pinned = {_key(f) for path in shipped.values() for f in read_baseline(path)}
        # A changed fact was reported above; only what no baseline knows is new.
        extra = [f for f in facts if f not in latest and _key(f) not in pinned]
        for fact in extra:
            errors.append(f"'{fact}' is new but onyx_api_v{version}.txt does not list it: "
                          f"append under ONYX_API_VERSION {max(shipped) + 1} if v{version} has shipped, "
                          f"else regenerate onyx_api_v{version}.txt with --dump")
    newer = [v for v in shipped if v > version]
    if newer:
        errors.append(f"baselines for versions {newer} are newer than the header's ONYX_API_VERSION {version}")
    return errors


def check_symbols(library, directory=HERE):
    out = subprocess.run(["nm", "-D", "--defined-only", str(library)], check=True, capture_output=True,
                         text=True).stdout
    exported = sorted(line.split()[-1] for line in out.splitlines() if line.strip())
    expected = sorted(l.strip() for l in (directory / "exported_symbols.txt").read_text().splitlines() if l.strip())
    if exported != expected:
        return [f"exported symbols {exported} differ from the baseline {expected}"]
    return []


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("library", nargs="?", help="libonyxruntime.so whose exported symbols to check")
    parser.add_argument("--header", default=str(HEADER), help="the public header (default: the tree's)")
    parser.add_argument("--baselines", default=str(HERE), help="folder of onyx_api_v*.txt and exported_symbols.txt")
    parser.add_argument("--dump", action="store_true", help="print the header's facts and exit")
    args = parser.parse_args(argv)
    directory = pathlib.Path(args.baselines)
    if args.dump:
        try:
            version, facts = header_facts(args.header)
        except HeaderError as e:
            sys.exit(f"{args.header}: {e}")
        print(f"# The C ABI of API version {version}: check_abi.py --dump (see its doc). Every line stays true in "
              f"later headers.")
        print("\n".join(facts))
        return 0
    errors = []
    if args.library:
        errors += check_symbols(args.library, directory)
    errors += check_header(args.header, directory)
    if errors:
        print("ABI check FAILED:\n  " + "\n  ".join(errors))
        return 1
    version, facts = header_facts(args.header)
    entries = sum(f.startswith("api ") for f in facts)
    what = "1 exported symbol, " if args.library else "header only, "
    print(f"ABI check passed: {what}{entries} OnyxApi entries (API version {version}), "
          f"signatures, enums and structs of {len(baselines(directory))} baselines intact")
    return 0


if __name__ == "__main__":
    sys.exit(main())
