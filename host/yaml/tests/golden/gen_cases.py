#!/usr/bin/env python3
"""Writes cases.jsonl: the JSON documents of the golden test, one per line.

Deterministic (fixed seed). Run it, then regenerate.sh, when adding cases:

    python3 gen_cases.py > cases.jsonl && ./regenerate.sh

Strings are written with every character go-yaml's reader could mistake
(controls, NEL, LS, PS, BOM) escaped, and non-ASCII text otherwise raw, so
that the Go reference and serde_json read the same values. Floats are written
as Go's encoding/json would (integral values below 1e21 as integers).
"""

import functools
import math
import random
import struct
import sys
import unicodedata

rng = random.Random(20240601)


def enc_str(s):
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif o < 0x20 or 0x7F <= o <= 0x9F or o in (0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF):
            out.append("\\u%04x" % o)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def enc_float(f):
    assert math.isfinite(f)
    if f == int(f) and abs(f) < 1e21:
        return str(int(f))
    return repr(f)


def go_key_less(a, b):
    """go-yaml's keyList.Less for strings (used only to filter key sets)."""
    is_letter = lambda c: unicodedata.category(c).startswith("L")
    is_digit = lambda c: unicodedata.category(c) == "Nd"
    for i in range(min(len(a), len(b))):
        if a[i] == b[i]:
            continue
        al, bl = is_letter(a[i]), is_letter(b[i])
        if al and bl:
            return a[i] < b[i]
        if al or bl:
            return bl
        an = bn = 0
        if a[i] == "0" or b[i] == "0":
            j = i - 1
            while j >= 0 and is_digit(a[j]):
                if a[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai = i
        while ai < len(a) and is_digit(a[ai]):
            an = an * 10 + ord(a[ai]) - 48
            ai += 1
        bi = i
        while bi < len(b) and is_digit(b[bi]):
            bn = bn * 10 + ord(b[bi]) - 48
            bi += 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return a[i] < b[i]
    return len(a) < len(b)


def consistent_keys(keys):
    """Drops keys until go-yaml's order on the rest is a total order.

    go-yaml's comparison is not transitive for some key sets (v1alpha1 < v2 <
    v10 < v1alpha1); Go then prints them in an order that depends on its
    random map iteration, so such sets cannot be golden cases.
    """
    keys = list(keys)
    cmp = lambda a, b: -1 if go_key_less(a, b) else (1 if go_key_less(b, a) else 0)
    while True:
        order = sorted(keys, key=functools.cmp_to_key(cmp))
        bad = next(((i, j) for i in range(len(order)) for j in range(i + 1, len(order))
                    if not go_key_less(order[i], order[j])), None)
        if bad is None:
            return keys
        keys.remove(order[bad[1]])


def enc(v):
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return enc_float(v)
    if isinstance(v, str):
        return enc_str(v)
    if isinstance(v, list):
        return "[" + ", ".join(enc(x) for x in v) + "]"
    if isinstance(v, dict):
        keys = consistent_keys(v.keys())
        return "{" + ", ".join(enc_str(k) + ": " + enc(v[k]) for k in keys) + "}"
    raise TypeError(v)


cases = []


def case(v):
    cases.append(v)


# --- Scalars that resolve to other types, and their plain neighbours -------
SPECIAL = [
    "", "~", "null", "Null", "NULL", "nULL", "true", "True", "TRUE", "tRUE", "false", "False",
    "FALSE", "y", "Y", "yes", "Yes", "YES", "yES", "n", "N", "no", "No", "NO", "on", "On", "ON",
    "off", "Off", "OFF", "oN", ".nan", ".NaN", ".NAN", ".nAn", ".inf", ".Inf", ".INF", "+.inf",
    "-.inf", "-.Inf", "+.INF", "<<", "<", "=", "1", "-1", "+1", "0", "-0", "00", "007", "08", "09",
    "0x1F", "0X1f", "0x", "0xG", "0o17", "0O17", "0o8", "0b101", "0B11", "0b", "0b2", "0b-1",
    "0b+1", "-0b101", "-0b-1", "1_000", "1__0", "_1", "1_", "1e3", "1E3", "1e+3", "1e-3", "1e",
    "e3", "1.", ".5", "+.5", "-.5", ".", "..", ".5.", "._5", ".5_5", ".5e3", ".5e_3", "1.5e3.2",
    "1e400", "-1e400", "1e-400", ".5e400", "9223372036854775807", "9223372036854775808",
    "-9223372036854775808", "-9223372036854775809", "18446744073709551615",
    "18446744073709551616", "99999999999999999999999999", "1:20", "1:60", "190:20:30",
    "190:20:30.15", "-1:59", "+1:5", "1:2:", "1::2", "1:20.5_5", "12:34:56", "1.2.3", "v1.2.3",
    "2024-01-01", "2024-1-1", "2024-01-01T00:00:00Z", "2024-01-01t00:00:00z",
    "2024-01-01t00:00:00Z", "2024-01-01T00:00:00", "2024-01-01T00:00:00.123Z",
    "2024-01-01T00:00:00,5Z", "2024-01-01T10:20:30+02:00", "2024-01-01T10:20:30-0200",
    "2024-01-01 10:20:30", "2024-01-01  10:20:30.5", "2024-01-01 10:20:30Z", "2024-02-29",
    "2023-02-29", "2024-02-30", "2024-13-01", "2024-00-10", "2024-01-32", "2024-01-01T24:00:00Z",
    "2024-01-01T23:60:00Z", "2024-01-01T23:59:60Z", "20240-01-01", "2024-01", "2024-01-01x",
    "1900-02-29", "2000-02-29", "0000-01-01", "2024-01-01T00:00:00.123456789Z", "123abc",
    "-", "--", "---", "----", "...", "....", "+", "Infinity", "-Infinity", "NaN", "inf", "nan",
    "0.0", "-0.0", "+0", "3.14159", "6.02e23", "1_2_3", "0_x1", "1__", "=foo",
]
case(SPECIAL)
case({s: s for s in SPECIAL})
for s in SPECIAL[:40]:
    case(s)

# --- Indicators and other characters that force quoting ---------------------
INDICATORS = "#,[]{}&*!|>'\"%@`?:-"
odd = []
for c in INDICATORS:
    odd += [c, c + "a", "a" + c, "a" + c + "b", "a " + c, c + " a", "a " + c + " b", c + c]
odd += [
    "a: b", "a:b", "a :b", "a:", "a: ", "key: value: more", "http://example.com/a#b", "a #b",
    "a# b", "#a", "- a", "-a", "? a", "?a", ": a", "a ?", "a ,b", "[a]", "{a}", "a [b]",
    "it's", "'quoted'", '"dq"', "a'b'c", "@user", "`cmd`", "%TAG", "!tag", "&anchor", "*alias",
    "|pipe", ">fold", "a|b", "a>b", " lead", "trail ", " both ", "  ", " ", "a  b", "a   b",
    "tab\there", "\tlead", "trail\t", "nul\u0000x", "bell\u0007", "del\u007f", "esc\u001b",
    "c1\u0080\u0085\u0099", "nbsp\u00a0x", "ls\u2028x", "ps\u2029x", "bom\ufeffx", "\ufeffbom",
    "\ufeff", "fffe\ufffe", "emoji 😀 here", "😀", "日本語のテキスト", "Ünïcödé", "a\u200bb",
    "\u00e9\u0301", "cr\rx", "crlf\r\nx", "a\\b", "back\\slash", "a\"b", "mixed 'single' \"double\"",
    "ending with colon:", "a,b", "a, b", "{{ template }}", "${VAR}", "$(cmd)", "~home", "a~",
    "=", "==", "<<<", "<=>", ",", "a\u0085b", "é: x", "日本: 語",
]
case(odd)
case({s: s for s in odd})
case({s: i for i, s in enumerate(odd)})

# --- Multi-line strings -----------------------------------------------------
MULTI = [
    "a\nb", "a\nb\n", "a\nb\n\n", "a\nb\n\n\n", "\n", "\n\n", "\na", "\n\na", " a\nb", "  a\n  b\n",
    "a\n b", "a \nb", "a\nb ", "a\n\nb", "a\n \nb", "a\tb\nc", "a\r\nb", "line1\nline2\nline3",
    "trailing spaces  \nline", "\ttab\nline", "a\nb\u2028c", "a\n\u2029", "😀\nx", "a\u0085\nb",
    "key: value\n- item\n# comment\n", "#!/bin/bash\necho hi\n", "---\nkind: X\n", "...\n",
    "x" * 100 + "\n" + "y" * 100, ("word " * 30).strip() + "\nnext line " + "z " * 50,
    "\ufeffbom\nx", "'single'\n\"double\"\n", "a\n\n\nb\n", " \n", "a\n ",
]
case(MULTI)
case({"k%02d" % i: s for i, s in enumerate(MULTI)})
case({s: "v" for s in MULTI})
case([[s] for s in MULTI[:12]])
case([{"a": s} for s in MULTI[:12]])
for s in MULTI[:10]:
    case(s)

# --- Folding at 80 columns --------------------------------------------------


def words(n, width, sep=" "):
    return sep.join(("w%0" + str(width - 1) + "d") % (i % 10 ** (width - 1)) for i in range(n))


def path(depth, leaf, key="k"):
    v = leaf
    for d in range(depth):
        v = {key + str(d): v} if d % 2 == 0 else [v]
    return v


for depth in [0, 1, 2, 3, 5, 8]:
    for total in [78, 79, 80, 81, 82, 83, 84, 90, 160, 161, 250]:
        # A string of exactly `total` characters with spaces every few columns.
        for word in [3, 7, 10]:
            s = words(total // (word + 1) + 2, word)[:total].rstrip()
            case(path(depth, s))
        # Quoted variants fold too.
        base = words(total // 8 + 2, 7)[:total].rstrip()
        case(path(depth, {"single": "a: " + base, "double": "true " + base + "\t",
                          "plain": base, "esc": "é" + base + "😀"}))

for width in range(70, 96):
    case({"m": ("x" * width) + " tail words here", "n": "a " + "y" * width + " z",
          "o": ("ab " * 40)[: width + 10]})
    case(["x" * width + " end", "x" * (width - 10) + " " + "y" * 15 + " end"])
case("x" * 300)
case({"long": "x" * 300, "l2": "x" * 300 + " y", "l3": "y " + "x" * 300})
case({"spaces": ("a" * 79) + "  b" + "  c" * 20})
case({"spaces2": ("a" * 81) + "  b  c   d"})
case({"dq": "\t" + ("a" * 85) + "  b  c   d" + "  e" * 30})
case({"dqs": ("a" * 78) + " \t " + "b " * 40})
case({"sq": "'" + ("it's " * 40)})
case({"sq2": "- " + ("don't stop " * 20)})
case({"sq3": ": " + ("x" * 90) + "  " + "y" * 5})
case({"nbsp": ("a\u00a0" * 60) + " " + ("b " * 30)})
case({"uni": ("é" * 85) + " " + ("ü" * 10) + " " + ("日本" * 50) + " end"})
case({"emoji": ("😀" * 85) + " x " + ("😀" * 10)})
case({"multi_long": ("long line " * 15) + "\n" + ("second " * 20) + "\n"})
case({"quoted_long_key_" + "k" * 20: "x " * 60})
case(["a " * 45, "- " + "b " * 45, "c " * 45 + "\n"])

# Sweep: a space at every column from 74 to 86, at several depths, in each
# quoting style and in sequences.
for depth in [0, 1, 2, 4]:
    for col in range(74, 87):
        for style, head, tail in [("plain", "", ""), ("single", "a: ", ""),
                                  ("double", "\t", ""), ("dspace", "\t", "  x"),
                                  ("lit", "", "\nend")]:
            prefix = 2 * depth + len("k: ")
            n = max(1, col - prefix - len(head))
            value = head + "x" * n + " " + "y" * 6 + " z" + tail + " q" * 3
            doc = {"k": value, "seq": [value, [value]]}
            for d in range(depth):
                doc = {"k": doc}
            case(doc)
# Escapes before the fold point count several columns each.
for n in range(60, 84, 3):
    case({"esc": "\u0001" * 5 + "x" * n + " after " + "w " * 20,
          "esc2": "😀" * 10 + "x" * (n - 10) + "  double  spaces  " * 4})

# --- Long and odd keys ------------------------------------------------------
for n in [120, 127, 128, 129, 130, 200, 900]:
    case({"k" * n: "v", "a" * n + " b": ["x"], "s" * n: {"nested": 1}})
    case({"w " * (n // 2): "v" * n})
case({"a\nb": "c", "x\ny\n": {"k": "v"}, "p\nq": ["r"], "multi\nkey\n\n": "mv\nx"})
case({"tab\tkey": 1, "": "empty key", " ": "space key", "true": "t", "null": None, "1": 1,
      "-": "dash", "? q": "q", ": c": "c", "# h": "h", "a b": "ab", "k: v": "kv"})
case({"\ufeffbom": 1, "😀": 2, "é": 3, "\u0085": 4})
case({"k" * 129 + "\t": {"a": [1, 2]}, "z" * 130: [], "y" * 131: {}})
case({"k" * 200: [{"a": 1}, [1, 2]], "j" * 200: "long value " * 12})

# --- Key order --------------------------------------------------------------
KEYS = [
    "a", "b", "A", "B", "aa", "ab", "a1", "a2", "a10", "a01", "a001", "a0", "a00", "a1b", "a1a",
    "a10b", "1", "2", "10", "01", "001", "0", "00", "_", "_a", "-", "-a", ".", ".a", "a.b", "a-b",
    "a_b", "a/b", "a:b", "ab1", "ab01", "x9", "x09", "x009", "x90", "x0900", "v1beta1", "v1alpha1",
    "v1", "v2", "v10", "apiVersion", "kind", "metadata", "spec", "status", "Z", "z", "é", "ß", "日",
    "٣", "a٣", "a3", "a٢", "Ⅻ", "²", "a²", "a2", "item10", "item9", "item100", "item09", "é1", "e1",
    "ea", "eé", "zz", "~", "!", "a!", "a~", "a0b", "a00b", "a1000000000000000000000",
    "a999999999999999999999", "a9223372036854775808",
]
shuffled = KEYS[:]
rng.shuffle(shuffled)
case({k: i for i, k in enumerate(shuffled)})
case({k: i for i, k in enumerate(sorted(KEYS))})
for _ in range(6):
    sample = rng.sample(KEYS, 12)
    case({k: k for k in sample})
for _ in range(6):
    keys = set()
    while len(keys) < 30:
        keys.add("".join(rng.choice("ab01_9.-Zz") for _ in range(rng.randint(1, 6))))
    case({k: 1 for k in keys})

# --- Numbers ----------------------------------------------------------------
ints = [0, 1, -1, 42, -42, 9001, 2 ** 31, -(2 ** 31), 2 ** 53, 2 ** 53 + 1, 2 ** 63 - 1, -(2 ** 63),
        2 ** 63, 2 ** 64 - 1, 10 ** 15, 10 ** 18]
floats = [0.5, -0.5, 1.5, 0.1, 0.2, 0.30000000000000004, 3.141592653589793, 2.718281828459045,
          1e21, 1e22, -1e21, 1e20, 1.5e20, 1e19, -1e19, 2.0 ** 64, 2.0 ** 70, 1e-6, 1e-7, 1.5e-7,
          -1e-7, 1e-5, 1e-4, 0.00012345, 1234567.5, 123456.5, 12345.678, 1e100, 1e-100,
          1.7976931348623157e308, 5e-324, 2.2250738585072014e-308, 123456789.123, 0.999999,
          99999.99, 999999.5, 1000000.5, 1e15 + 0.5, 4.35, 100.25, 1e6 + 0.1]
case(ints)
case(floats)
case({"i%02d" % i: v for i, v in enumerate(ints)})
case({"f%02d" % i: v for i, v in enumerate(floats)})
for v in ints[:8] + floats[:12]:
    case(v)
rand_floats = []
for _ in range(300):
    kind = rng.random()
    if kind < 0.4:
        bits = rng.getrandbits(64)
        f = struct.unpack("<d", struct.pack("<Q", bits))[0]
        if not math.isfinite(f):
            continue
    elif kind < 0.7:
        f = rng.uniform(-1, 1) * 10 ** rng.randint(-12, 25)
    else:
        f = round(rng.uniform(-1000, 1000), rng.randint(0, 6))
    rand_floats.append(f)
for i in range(0, len(rand_floats), 30):
    case(rand_floats[i:i + 30])
case([rng.randint(-(2 ** 63), 2 ** 63 - 1) for _ in range(20)])
case([True, False, None, [], {}, [[]], [{}], {"a": []}, {"a": {}}, {"a": [[]]}])

# --- Nesting shapes ---------------------------------------------------------
case([])
case({})
case([[]])
case([{}])
case([[[]]])
case([[1, [2, [3, [4]]]], [[], [{}]]])
case({"a": [[1, 2], [3, [4, 5]]], "b": [{"c": [{"d": []}]}]})
case([{"a": 1, "b": [1, 2]}, {"c": {"d": {"e": [{"f": None}]}}}])
case({"list": [{"k": "v", "l": ["x", {"m": "n"}]}, ["p", ["q"]], "r"]})
deep = "leaf"
for i in range(120):
    deep = [deep] if i % 3 == 0 else {"d%d" % i: deep}
case(deep)
deep2 = {"end": "x " * 50}
for i in range(60):
    deep2 = {"level%02d" % i: deep2}
case(deep2)
deep3 = "z " * 50
for i in range(60):
    deep3 = [deep3]
case(deep3)

# --- Kubernetes and Crossplane shaped objects -------------------------------
condition = lambda t, s, r, m=None, ts="2024-01-01T00:00:00Z": dict(
    {"type": t, "status": s, "reason": r, "lastTransitionTime": ts},
    **({"message": m} if m is not None else {}))
case({
    "apiVersion": "example.crossplane.io/v1",
    "kind": "XR",
    "metadata": {"name": "example-xr", "annotations": {
        "crossplane.io/composition-resource-name": "bucket",
        "note": "a: b",
        "long": "This annotation is a rather long piece of text that goes on and on past the "
                "eighty column limit so that go-yaml folds it.",
    }, "labels": {"app.kubernetes.io/name": "demo", "version": "1.0", "enabled": "true",
                  "count": "3", "empty": ""}},
    "spec": {"region": "us-east-1", "replicas": 3, "ratio": 0.75, "ports": [80, 443],
             "tags": {}, "list": []},
    "status": {"conditions": [
        condition("Synced", "True", "ReconcileSuccess"),
        condition("Ready", "False", "Creating", "Unready resources: bucket, database, network"),
        condition("Healthy", "Unknown", "Unknown",
                  "Composition function 'function-patch-and-transform' returned a fatal result: "
                  "cannot render composed resource \"bucket\": cannot apply the patch at index 0: "
                  "spec.forProvider.region: no such field", "2024-05-06T07:08:09.123456Z"),
    ]},
})
case({
    "apiVersion": "render.crossplane.io/v1beta1",
    "kind": "Result",
    "message": "I am doing a thing that is rather long to explain, and the explanation goes on "
               "for quite a while, with 'quotes' and: colons",
    "severity": "SEVERITY_NORMAL",
    "step": "normal",
})
case({
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "cfg", "namespace": "default"},
    "data": {
        "config.yaml": "server:\n  port: 8080\n  host: 0.0.0.0\nlogging:\n  level: debug\n",
        "script.sh": "#!/bin/sh\nset -e\necho \"hello\"\n",
        "single": "no newline at all",
        "trailing": "line with trailing space \nnext",
        "json": "{\"a\": 1, \"b\": [1, 2, 3]}",
        "port": "8080",
        "version": "1.20",
        "octal": "0755",
        "bool": "yes",
        "empty": "",
        "date": "2024-01-01",
    },
})
case({
    "apiVersion": "apiextensions.crossplane.io/v1",
    "kind": "Composition",
    "metadata": {"name": "xbuckets.example.org"},
    "spec": {
        "compositeTypeRef": {"apiVersion": "example.org/v1alpha1", "kind": "XBucket"},
        "mode": "Pipeline",
        "pipeline": [{
            "step": "patch-and-transform",
            "functionRef": {"name": "function-patch-and-transform"},
            "input": {
                "apiVersion": "pt.fn.crossplane.io/v1beta1",
                "kind": "Resources",
                "resources": [{
                    "name": "bucket",
                    "base": {"apiVersion": "s3.aws.upbound.io/v1beta1", "kind": "Bucket",
                             "spec": {"forProvider": {"region": "us-east-2"}}},
                    "patches": [{"type": "FromCompositeFieldPath",
                                 "fromFieldPath": "spec.region",
                                 "toFieldPath": "spec.forProvider.region",
                                 "transforms": [{"type": "string", "string": {
                                     "fmt": "%s-suffix", "type": "Format"}}]}],
                }],
            },
        }, {
            "step": "go-templating",
            "functionRef": {"name": "function-go-templating"},
            "input": {"apiVersion": "gotemplating.fn.crossplane.io/v1beta1", "kind": "GoTemplate",
                      "source": "Inline", "inline": {"template": (
                          "---\napiVersion: example.org/v1\nkind: Thing\nmetadata:\n  annotations:\n"
                          "    {{ setResourceNameAnnotation \"thing\" }}\nspec:\n"
                          "  value: {{ .observed.composite.resource.spec.value | quote }}\n")}},
        }],
    },
})
case({
    "apiVersion": "s3.aws.upbound.io/v1beta1",
    "kind": "Bucket",
    "metadata": {"annotations": {"crossplane.io/composition-resource-name": "bucket"},
                 "generateName": "example-xr-", "labels": {"crossplane.io/composite": "example-xr"},
                 "ownerReferences": [{"apiVersion": "example.crossplane.io/v1", "blockOwnerDeletion": True,
                                      "controller": True, "kind": "XR", "name": "example-xr", "uid": ""}]},
    "spec": {"forProvider": {"region": "us-east-2", "tags": {"a": "b"}, "objectLockEnabled": False,
                             "size": 9001, "weight": 1.25}},
})
case({"status": {"conditions": [condition("Ready", "False", "ReconcileError",
        "observe failed: cannot run refresh: refresh failed: error reading S3 Bucket (my-bucket-name-"
        "that-is-pretty-long-indeed): operation error S3: HeadBucket, https response error "
        "StatusCode: 403, RequestID: ABCDEF0123456789, HostID: xyzxyzxyzxyzxyzxyzxyzxyzxyzxyz=, "
        "api error Forbidden: Forbidden")]}})
case({"message": "Unready resources: a, b", "warning": "Warning: it's 'quoted' and: colon'd " * 4})

# --- Fuzz: random strings from an alphabet of awkward characters ------------
ALPHABET = list("ab z09 _-.:#,'\"\\[]{}&*!|>%@`?~=<\t\n\r") + [
    "\u0000", "\u0085", "\u00a0", "\u2028", "\u2029", "\ufeff", "é", "日", "😀", "\u007f", "  ",
    "- ", ": ", " #", "---", "...", "\r\n",
]


def rand_str(max_len):
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, max_len)))


def rand_value(depth):
    r = rng.random()
    if depth <= 0 or r < 0.5:
        kind = rng.random()
        if kind < 0.75:
            return rand_str(rng.choice([3, 8, 20, 120]))
        if kind < 0.85:
            return rng.randint(-1000, 1000)
        if kind < 0.9:
            return rng.choice([True, False, None])
        return round(rng.uniform(-100, 100), 3)
    if r < 0.75:
        return [rand_value(depth - 1) for _ in range(rng.randint(0, 4))]
    return {rand_str(10): rand_value(depth - 1) for _ in range(rng.randint(0, 4))}


for _ in range(120):
    case(rand_value(rng.randint(0, 5)))
for _ in range(40):
    case({"k": rand_str(200), rand_str(6): [rand_str(90), {rand_str(4): rand_str(150)}]})

SPACEY = ["a", "bb", "ccc", " ", " ", " ", "  ", "'", ": ", "\t", "é", "😀", "\n", "#"]
for _ in range(60):
    text = "".join(rng.choice(SPACEY) for _ in range(rng.randint(60, 260)))
    doc = {"f": text, "l": [text], "m": {"n": text}}
    for d in range(rng.randint(0, 4)):
        doc = [doc] if d % 2 else {"d": doc}
    case(doc)

for v in cases:
    sys.stdout.write(enc(v) + "\n")
