#!/usr/bin/env python3
"""The reference side of xfn-kcl's differential test: runs KCL programs
through the real KCL (PyPI's kcl-lib) and prints their results in the
canonical form xfn-kcl's `Value::canonical` prints.

stdin:  a JSON list of {"name", "source", "options": {key: JSON text}},
        with "dir" (the program's package directory) and "external"
        ({package name: directory}) for programs that import packages, and
        "package": true for a package that runs as `kcl run DIR` does (its
        kcl.mod's [profile] entries, or its root's .k files)
stdout: a JSON list of {"name", "ok": canonical text} or {"name", "error": message}

Exit status 3, with a message, when kcl_lib cannot be imported.
"""
import decimal
import json
import os
import sys
import tomllib

try:
    import kcl_lib.api as api
except ImportError as e:  # the test skips with this message
    print(f"kcl-lib is not installed in this Python ({sys.executable}): {e}", file=sys.stderr)
    sys.exit(3)


def rust_float(x):
    """A float as Rust's `{:e}` prints it (shortest round-trip digits)."""
    if x != x or x in (float("inf"), float("-inf")):
        return "null"
    sign, digits, exp = decimal.Decimal(repr(x)).as_tuple()
    digits = list(digits)
    while len(digits) > 1 and digits[-1] == 0:
        digits.pop()
        exp += 1
    e10 = exp + len(digits) - 1
    mant = str(digits[0]) + ("." + "".join(map(str, digits[1:])) if len(digits) > 1 else "")
    if digits == [0]:
        e10 = 0
    return "f:" + ("-" if sign else "") + mant + "e" + str(e10)


def canonical(v):
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return rust_float(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, Pairs):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + canonical(x) for k, x in v) + "}"
    if isinstance(v, list):
        return "[" + ",".join(canonical(x) for x in v) + "]"
    raise TypeError(f"unexpected JSON value {v!r}")


def package_files(d):
    """The files `kcl run DIR` compiles for package directory d, as kpm
    hands them to KCL (kpm's applyCompileOptions): the kcl.mod's
    [profile] entries, relative ones joined to the package root and
    ${KCL_MOD}/ ones left for KCL to resolve; without entries, the
    directory itself (KCL compiles its .k files)."""
    try:
        with open(os.path.join(d, "kcl.mod"), "rb") as f:
            entries = tomllib.load(f).get("profile", {}).get("entries") or []
    except FileNotFoundError:
        entries = []
    if not entries:
        return [d]
    return [e if e.startswith("${") or os.path.isabs(e) else os.path.join(d, e) for e in entries]


class Pairs(list):
    """A JSON object as its ordered (key, value) pairs."""


def stream(text):
    """The JSON documents of a result, one or more, one after another."""
    dec = json.JSONDecoder(object_pairs_hook=Pairs)
    docs, i = [], 0
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            break
        doc, i = dec.raw_decode(text, i)
        docs.append(doc)
    return docs


def main():
    programs = json.load(sys.stdin)
    kcl = api.API()
    out = []
    for p in programs:
        args = [api.Argument(name=k, value=v) for k, v in p.get("options", {}).items()]
        try:
            if p.get("package"):
                pkgs = [api.ExternalPkg(pkg_name=n, pkg_path=d) for n, d in p.get("external", {}).items()]
                r = kcl.exec_program(api.ExecProgramArgs(
                    work_dir=p["dir"], k_filename_list=package_files(p["dir"]),
                    args=args, external_pkgs=pkgs))
            elif p.get("dir"):
                # A program with its package directory on disk: main.k in
                # its work_dir (the main package's root), and external
                # packages (kcl.mod dependencies) by name and directory.
                pkgs = [api.ExternalPkg(pkg_name=n, pkg_path=d) for n, d in p.get("external", {}).items()]
                main = p["dir"] + "/main.k"
                r = kcl.exec_program(api.ExecProgramArgs(
                    work_dir=p["dir"], k_filename_list=[main], k_code_list=[p["source"]],
                    args=args, external_pkgs=pkgs))
            else:
                r = kcl.exec_program(api.ExecProgramArgs(k_filename_list=["main.k"], k_code_list=[p["source"]], args=args))
            if r.err_message:
                out.append({"name": p["name"], "error": r.err_message})
                continue
            docs = stream(r.json_result or "{}")
            if len(docs) == 1:
                out.append({"name": p["name"], "ok": canonical(docs[0])})
            else:  # a top-level list expression: a stream of documents
                out.append({"name": p["name"], "ok": "stream:" + canonical(docs)})
        except Exception as e:  # kcl-lib raises for compile errors
            out.append({"name": p["name"], "error": str(e).strip()})
    json.dump(out, sys.stdout)


main()
