#!/usr/bin/env python3
# mcp_invoke: the official JSON Schema test suite against its validator. MIT License.
"""Run JSON-Schema-Test-Suite's draft2020-12 tests through mcp_invoke's validator.

    python3 schema_suite.py SDIST_DIR

SDIST_DIR holds the jsonschema source distribution (``make schema-suite``
downloads it there); its ``json/tests/draft2020-12/`` is extracted once next
to it, and every test file of that directory is run through
``_schema_problem(data, schema)``: a test passes when the answer is None
exactly for valid data. Skipped, each with its reason: ``optional/``,
refRemote.json and dynamicRef.json, and the cases whose schema refers to a
document it does not contain (a remote, or a metaschema), which mcp_invoke
never fetches, or uses ``$dynamicRef``, which it does not implement.

Prints one line per file (passed/run, skipped, failing descriptions), then the
total; exits 1 if any test failed. Standard library only, Python 3.6 or newer.
"""

import glob
import json
import os
import sys
import tarfile
from urllib.parse import urljoin

import mcp_invoke

SUITE = "json/tests/draft2020-12/"
SKIPPED_FILES = {
    "refRemote.json": "every case needs a remote document",
    "dynamicRef.json": "$dynamicRef is not implemented",
}
KNOWN_DIALECTS = ("https://json-schema.org/draft/2020-12/schema",)


def extracted(sdist_dir):
    """The suite's directory, extracted from the sdist in sdist_dir unless it already is."""
    target = os.path.join(sdist_dir, "draft2020-12")
    if os.path.isdir(target):
        return target
    archives = sorted(glob.glob(os.path.join(sdist_dir, "jsonschema-*.tar.gz")))
    if not archives:
        sys.exit("schema_suite: no jsonschema-*.tar.gz in %s" % sdist_dir)
    partial = target + ".partial"
    with tarfile.open(archives[-1]) as archive:
        for member in archive.getmembers():
            name = member.name.split("/", 1)[-1]
            if not (member.isfile() and name.startswith(SUITE) and name.endswith(".json")):
                continue
            parts = name[len(SUITE):].split("/")
            if ".." in parts or "" in parts:
                continue
            path = os.path.join(partial, *parts)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as out:
                out.write(archive.extractfile(member).read())
    os.rename(partial, target)
    return target


def nodes(value, base):
    """Every object in a schema, with the base URI its $id gives it (approximately)."""
    if isinstance(value, dict):
        if isinstance(value.get("$id"), str):
            base = urljoin(base, value["$id"]).partition("#")[0]
        yield value, base
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            for found in nodes(item, base):
                yield found


def why_skipped(schema):
    """Why a schema cannot be checked without fetching, or None."""
    found = list(nodes(schema, ""))
    ids = set(base for _, base in found)
    for node, base in found:
        if "$dynamicRef" in node:
            return "uses $dynamicRef"
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            uri = urljoin(base, ref).partition("#")[0]
            if uri not in ids:
                return "refers to %s, which is not in the document" % uri
    dialect = schema.get("$schema") if isinstance(schema, dict) else None
    if dialect is not None and dialect not in KNOWN_DIALECTS:
        return "its $schema %s needs that metaschema" % dialect
    return None


def run_file(path):
    """(passed, failed descriptions, skipped reasons) for one test file."""
    passed, failed, skipped = 0, [], []
    with open(path, encoding="utf-8") as f:
        groups = json.load(f)
    for group in groups:
        reason = why_skipped(group["schema"])
        if reason:
            skipped.append("%s (%s)" % (group["description"], reason))
            continue
        for test in group["tests"]:
            problem = mcp_invoke._schema_problem(test["data"], group["schema"], seconds=10)
            if (problem is None) == test["valid"]:
                passed += 1
            else:
                failed.append("%s / %s: %s" % (group["description"], test["description"],
                                               problem or "no problem found"))
    return passed, failed, skipped


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        sys.exit("usage: schema_suite.py SDIST_DIR")
    directory = extracted(argv[0])
    total_passed = total_run = 0
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        name = os.path.basename(path)
        if name in SKIPPED_FILES:
            print("%s: skipped, %s" % (name, SKIPPED_FILES[name]))
            continue
        passed, failed, skipped = run_file(path)
        total_passed += passed
        total_run += passed + len(failed)
        print("%s: %d/%d%s" % (name, passed, passed + len(failed),
                               "" if not skipped else ", skipped %d" % len(skipped)))
        for line in ["  skipped: " + s for s in skipped] + ["  FAILED: " + f for f in failed]:
            print(line)
    print("optional/: skipped, not required by the specification")
    print("total: %d/%d passed" % (total_passed, total_run))
    return 0 if total_passed == total_run else 1


if __name__ == "__main__":
    sys.exit(main())
