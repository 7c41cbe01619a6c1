"""Differential check of mcp_invoke against PyYAML, the YAML 1.1 reader that
Python servers (fastmcp) use, and optionally against YAML 1.2.

Run with a Python that has PyYAML:

    $(INTEROP_VENV)/bin/python \
        interop/yaml_differential.py [--count N] [--fuzz N] [--seed S] [--roots DIR...]
                             [--yaml12 DIR] [-v]

Each front matter is read by PyYAML as fastmcp cuts it out (without the line
break before the closing ---) and as whole lines (with it), with SafeLoader
and BaseLoader; each reading is rendered the way a server would
(json.loads(json.dumps(x, default=str))) and must match what mcp_invoke read.
The front matters are hand-written cases, generated ones (random combinations
of the constructs mcp_invoke reads, over a pool of tricky plain scalars),
generated ones with one to three random edits (fuzzed), and the SKILL.md files
found under --roots. Where PyYAML refuses, mcp_invoke must refuse too, or the
difference must be a known one (KNOWN_PYYAML_ONLY_REFUSALS); where mcp_invoke
refuses and PyYAML reads, the refusal must be one the contract makes
(KNOWN_OURS_ONLY_REFUSALS), except for fuzzed text, where refusing is always
safe. On a sample, the rendering is mutated (a leaf changed, a bool swapped
for an int, a key dropped or added, an item dropped) and must no longer match.

With --yaml12 DIR, where `npm install yaml@2` was run, each front matter is
also read as YAML 1.2 with the core schema by check_yaml12.mjs (copied into
DIR) and compared the same way.

Prints counts; exits 1 on any disagreement.
"""

import argparse
import json
import math
import os
import random
import re
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the checkout
sys.path.insert(0, HERE)
import mcp_invoke  # noqa: E402

# fastmcp.skills._snapshot.parse_frontmatter cuts the front matter out so.
FASTMCP_FRONT = re.compile(r"\A---\r?\n(.*?)\r?\n---(?:\r?\n|\Z)", re.DOTALL)

# What PyYAML refuses and mcp_invoke reads on purpose (as strings): PyYAML's
# SafeLoader fails on them in construction, after parsing, or crashes.
KNOWN_PYYAML_ONLY_REFUSALS = (
    ("could not determine a constructor for the tag 'tag:yaml.org,2002:value'",
     "a plain '=' (YAML 1.1's value key): mcp_invoke reads the string '='"),
    ("out of range", "a timestamp with no such day or hour: mcp_invoke reads its string"),
    ("must be in", "a timestamp with no such day or hour: mcp_invoke reads its string"),
    ("invalid literal for int() with base", "'0b_' or '0x_': mcp_invoke reads its string"),
    ("keys must be str", "a timestamp key, which json.dumps cannot write: mcp_invoke "
     "reads its string"),
    ("offset must be a timedelta", "a timestamp with no such offset: mcp_invoke reads "
     "its string"),
)

# What the contract refuses and PyYAML reads (the generator never writes them;
# the hand-written cases do).
KNOWN_OURS_ONLY_REFUSALS = (
    "anchors (&)", "aliases (*)", "tags (!)", "complex keys", "appears twice",
    "merge keys", "a document marker", "directives",
    "a tab outside quotes",  # PyYAML refuses it; YAML 1.2 reads it
    "after an escaped line break",  # PyYAML and the npm yaml disagree
    "line of only spaces",  # so do they
)

# What the npm package yaml (2.9) refuses and mcp_invoke and PyYAML read alike.
KNOWN_YAML12_ONLY_REFUSALS = (
    ("Implicit keys need to be on a single line",
     "a comment line less indented than the value below it (valid YAML 1.2)"),
)

PLAIN_POOL = [
    "yes", "no", "on", "off", "Yes", "NO", "On", "OFF", "y", "n", "Y", "N",
    "true", "False", "TRUE", "~", "null", "Null", "NULL",
    "1.10", "010", "08", "0x1F", "0o17", "0b101", "1_000", "1:20", "1:20.5",
    "190:20:30", ".inf", "-.Inf", "+.INF", ".nan", ".NaN", "2024-01-02",
    "2024-01-02 10:00:00", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5",
    "2024-1-2", "+1", "-0", "+0", "-0.0", "12e3", "1e3", "1.0e+3", "1.0e3", "-.5",
    ".5", "1.", "+12", "0", "7", "123456789012345678901234567890", "3.14159",
    "6.02e+23", "1_0.5", "0x_1F",
    "hello", "hello world", "a:b", "a#b", "http://example.com/x?q=1",
    "C:\\path\\to", "héllo", "日本語", "😀 emoji", "-x", "?x", ":x", "a - b",
    "it's", 'say "hi"', "x: y z".replace(": ", ":"), "50%", "a,b", "tab-free",
    "trailing dots...", "name@example.com", "!important".replace("!", "i"),
    "version 1.2.3", "1.2.3", "0.1", "- not a list".replace("- ", "-"),
]
FLOW_UNSAFE = re.compile(r"[,\[\]{}?#]|^[-?:](?:[ ,\[\]{}]|$)|^[?:]")
KEY_POOL = [
    "name", "description", "license", "compatibility", "allowed-tools",
    "metadata", "version", "author", "tags", "x y", "ключ", "a.b", "k#1",
    "with-dash", "_under", "日本", "url", "on_off", "n1", "config", "deep",
]
TRICKY_KEYS = ["yes", "1", "1.10", "null", "010", "true", "~", "0x1F", "on"]
TEXT_CHARS = list("abcdefghij XYZ0123456789#:'\",.-!?&*|>%@`[]{}\\/é😀日\t")


class Gen(object):
    """Writes a random front matter's lines."""

    def __init__(self, rng):
        self.rng = rng
        self.lines = []

    def doc(self):
        self.mapping(0, 0)
        return "\n".join(self.lines) + "\n"

    def keys(self, count):
        rng = self.rng
        keys = rng.sample(KEY_POOL, count)
        if rng.random() < 0.15:
            keys[0] = rng.choice(TRICKY_KEYS)
        shown = []
        for key in keys:
            roll = rng.random()
            if roll < 0.1:
                shown.append(json.dumps(key + ": q", ensure_ascii=False))
            elif roll < 0.15:
                shown.append("'%s''s'" % key)
            else:
                shown.append(key)
        return shown

    def comment(self):
        return "  # note: #x 'q' \"d\"" if self.rng.random() < 0.15 else ""

    def mapping(self, indent, depth, first_prefix=None):
        for index, key in enumerate(self.keys(self.rng.randint(1, 5))):
            if index == 0 and first_prefix is not None:
                prefix = first_prefix
            else:
                prefix = " " * indent
            if self.rng.random() < 0.08:
                self.lines.append(" " * indent + "# a comment line")
            self.value(prefix + key + (" :" if self.rng.random() < 0.05 else ":"),
                       indent, depth)

    def value(self, head, indent, depth, in_seq=False):
        rng = self.rng
        kinds = ["plain", "plain", "plain", "quoted", "block", "flow", "empty",
                 "multi"]
        if depth < 4:
            kinds += ["map", "seq"]
        kind = rng.choice(kinds)
        step = rng.choice([1, 2, 2, 4])
        if kind == "plain":
            self.lines.append(head + " " + rng.choice(PLAIN_POOL) + self.comment())
        elif kind == "multi":
            words = [rng.choice(PLAIN_POOL) for _ in range(rng.randint(2, 4))]
            words = [w for w in words if not w.startswith(("-", "?", ":", "#"))] or ["w"]
            self.lines.append(head + " " + words[0])
            for word in words[1:]:
                if rng.random() < 0.2:
                    self.lines.append("")
                self.lines.append(" " * (indent + step) + word)
        elif kind == "quoted":
            self.quoted(head, indent + step)
        elif kind == "block":
            self.block(head, indent, step)
        elif kind == "flow":
            self.lines.append(head + " " + self.flow(depth, indent + step) + self.comment())
        elif kind == "empty":
            self.lines.append(head + self.comment())
        elif kind == "map":
            self.lines.append(head + self.comment())
            self.mapping(indent + step, depth + 1)
        else:
            self.lines.append(head + self.comment())
            same = not in_seq and rng.random() < 0.4
            self.sequence(indent if same else indent + step, depth + 1)

    def sequence(self, indent, depth):
        rng = self.rng
        for _ in range(rng.randint(1, 4)):
            roll = rng.random()
            dash = " " * indent + "-"
            if roll < 0.2 and depth < 4:
                # a compact mapping: its first key on the dash's line
                self.mapping(indent + 2, depth + 1, first_prefix=dash + " ")
            elif roll < 0.3 and depth < 4:
                self.lines.append(dash + " - " + rng.choice(PLAIN_POOL))
                self.lines.append(" " * (indent + 2) + "- " + rng.choice(PLAIN_POOL))
            else:
                self.value(dash, indent, depth, in_seq=True)

    def text(self, size):
        return "".join(self.rng.choice(TEXT_CHARS) for _ in range(size))

    def quoted(self, head, indent):
        rng = self.rng
        words = [self.text(rng.randint(0, 8)) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.5:
            parts = [w.replace("'", "''") for w in words]
            quote = "'"
        else:
            parts = [self.escaped(w) for w in words]
            quote = '"'
        if rng.random() < 0.6:
            self.lines.append(head + " " + quote + " ".join(parts) + quote + self.comment())
            return
        self.lines.append(head + " " + quote + parts[0])
        for part in parts[1:]:
            escaped = quote == '"' and rng.random() < 0.3
            if escaped:
                self.lines[-1] += "\\"
            if rng.random() < (0.02 if escaped else 0.3):
                self.lines.append(" " * rng.randint(0, 3))
            self.lines.append(" " * indent + part)
        self.lines[-1] += quote + self.comment()

    def escaped(self, word):
        rng = self.rng
        out = []
        for char in word:
            if char in '"\\':
                out.append("\\" + char)
            elif char == "\t" or rng.random() < 0.1:
                out.append(rng.choice(["\\x%02x", "\\u%04x", "\\U%08x"]) % ord(char)
                           if ord(char) < 0x100 else "\\U%08x" % ord(char))
            else:
                out.append(char)
        if rng.random() < 0.2:
            out.append(rng.choice(["\\n", "\\t", "\\/", "\\ ", "\\_", "\\e", "\\0"]))
        return "".join(out)

    def block(self, head, indent, step):
        rng = self.rng
        style = rng.choice("|>")
        chomp = rng.choice(["", "", "-", "+"])
        lines = []
        for _ in range(rng.randint(0, 5)):
            roll = rng.random()
            if roll < 0.2:
                lines.append("")
            elif roll < 0.35:
                lines.append(" " * rng.randint(1, 3) + self.text(rng.randint(1, 8)).strip("\t"))
            else:
                lines.append(self.text(rng.randint(1, 10)).strip(" \t") or "x")
        texts = [line for line in lines if line]
        explicit = texts and texts[0].startswith(" ") or rng.random() < 0.2
        indicator = str(step) if explicit else ""
        if explicit and step > 9:
            indicator = "9"
        header = style + (indicator + chomp if rng.random() < 0.5 else chomp + indicator)
        self.lines.append(head + " " + header + self.comment())
        for line in lines:
            self.lines.append(" " * (indent + step) + line if line else
                              " " * rng.randint(0, indent + step))
        for _ in range(rng.randint(0, 2)):
            self.lines.append("")

    def flow(self, depth, indent):
        rng = self.rng
        if rng.random() < 0.5 or depth >= 3:
            items = [self.flow_scalar() for _ in range(rng.randint(0, 4))]
        else:
            items = [self.flow(depth + 1, indent) if rng.random() < 0.4
                     else self.flow_scalar() for _ in range(rng.randint(0, 3))]
        if rng.random() < 0.5:
            keys = self.keys(len(items)) if items else []
            items = ["%s: %s" % pair for pair in zip(keys, items)]
            opening, closing = "{", "}"
        else:
            opening, closing = "[", "]"
        separator = rng.choice([", ", ",", " , ", ",\n" + " " * indent])
        text = opening + separator.join(items)
        if items and rng.random() < 0.2:
            text += ","
        return text + closing

    def flow_scalar(self):
        rng = self.rng
        if rng.random() < 0.2:
            return json.dumps(self.text(rng.randint(0, 6)).replace("\t", " "),
                              ensure_ascii=False)
        while True:
            value = rng.choice(PLAIN_POOL)
            if not FLOW_UNSAFE.search(value):
                return value


FUZZ_PIECES = [" ", "  ", ":", ": ", "#", " #", "-", "- ", "\n", "\n  ", "\n- ", "'", '"',
               "[", "]", "{", "}", ",", "|", ">", "\\", "?", "\t", "x", "1", ".",
               "\r", "\r\n", "0", "~", "e", "+", "_", "!", "&", "*", "%", "@", "`",
               "\\u00", "\\x4", "|-", ">+2", "\n\n", "\n    ", "\n#", "é", "\u2028"]


def fuzzed(text, rng):
    """text with one to three random edits inside its front matter."""
    end = text.index("\n---", 3)
    for _ in range(rng.randint(1, 3)):
        pos = rng.randint(4, end)
        roll = rng.random()
        if roll < 0.4:
            text = text[:pos] + rng.choice(FUZZ_PIECES) + text[pos:]
        elif roll < 0.7:
            text = text[:pos] + text[pos + 1:]
        else:
            text = text[:pos] + rng.choice(FUZZ_PIECES) + text[pos + 1:]
        end = text.find("\n---", 3)
        if end < 0:
            break
    return text


class DuplicateRefusingLoader(yaml.SafeLoader):
    """SafeLoader refusing a key that appears twice to Python, as fastmcp's does."""

    def construct_mapping(self, node, deep=False):
        result = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in result:
                raise ValueError("duplicate frontmatter key: %r" % (key,))
            result[key] = self.construct_object(value_node, deep=deep)
        return result


def rendered(value):
    return json.loads(json.dumps(value, default=str))


def pyyaml_readings(text):
    """What a server using PyYAML publishes for SKILL.md's text: a list of
    (label, JSON value), or the error PyYAML raised."""
    match = FASTMCP_FRONT.match(text.lstrip("\ufeff"))
    if match is None:
        return "fastmcp finds no front matter"
    cut = match.group(1)
    results = []
    try:
        for label, source in (("cut", cut), ("lines", cut + "\n")):
            results.append(("safe/" + label, rendered(yaml.safe_load(source))))
        results.append(("base/cut", rendered(yaml.load(cut, Loader=yaml.BaseLoader))))
    except Exception as exc:  # PyYAML raises more than YAMLError (ValueError)
        return "%s: %s" % (type(exc).__name__, str(exc).replace("\n", " | "))
    if not isinstance(results[0][1], dict):
        return "not a mapping"
    return results


def python_duplicates(text):
    """Whether PyYAML reads two keys of one mapping as one Python key."""
    try:
        yaml.load(FASTMCP_FRONT.match(text.lstrip("\ufeff")).group(1),
                  Loader=DuplicateRefusingLoader)
    except ValueError as exc:
        return "duplicate frontmatter key" in str(exc)
    return False


def mutated(value, rng):
    """The value with one change that must make it differ, or None."""
    value = json.loads(json.dumps(value))
    paths = []

    def walk(node, path):
        paths.append(path)
        if isinstance(node, dict):
            for key in node:
                walk(node[key], path + [key])
        elif isinstance(node, list):
            for index, item in enumerate(node):
                walk(item, path + [index])

    walk(value, [])
    path = rng.choice(paths)
    parent = None
    node = value
    for step in path:
        parent, node = node, node[step]

    def put(new):
        if parent is None:
            return new
        parent[path[-1]] = new
        return value

    if isinstance(node, dict):
        if node and rng.random() < 0.5:
            del node[rng.choice(list(node))]
        else:
            node["zz-added"] = "x"
        return value
    if isinstance(node, list):
        if not node:
            node.append("x")
        else:
            node.pop()
        return value
    if isinstance(node, bool):
        return put(int(node))
    if node is None:
        return put(False)
    if isinstance(node, (int, float)):
        if isinstance(node, float) and not math.isfinite(node):
            return put(0.0)
        if isinstance(node, int):
            return put(node + 1 if abs(node) < 2 ** 53 else node * 2 + 1)
        return put(node * 2 + 1)
    return put(node + "!")


def kind_of(label):
    return label.split(" #")[0] if " #" in label else "on disk"


def check(text, label, counts, problems, rng):
    """Compare mcp_invoke with PyYAML on one SKILL.md text."""
    kind = kind_of(label) + ", PyYAML: "
    theirs = pyyaml_readings(text)
    try:
        ours = mcp_invoke._front_matter(text)
        refused = None
    except mcp_invoke._YamlRefused as exc:
        ours, refused = None, exc
    if isinstance(theirs, str):
        if refused is not None:
            counts[kind + "both refuse"] += 1
            return
        for needle, why in KNOWN_PYYAML_ONLY_REFUSALS:
            if needle in theirs:
                counts[kind + ("PyYAML refuses, ours reads (known: %s)" % why)] += 1
                return
        problems.append("%s: PyYAML refuses (%s), ours reads %r\n%s" % (
            label, theirs[:200], ours, text))
        return
    if refused is not None:
        if label.startswith("fuzzed"):
            counts[kind + "ours refuses, PyYAML reads (refusing is safe)"] += 1
            return
        for needle in KNOWN_OURS_ONLY_REFUSALS:
            if needle in refused.reason:
                counts[kind + ("ours refuses, PyYAML reads (by contract: %s)" % needle)] += 1
                return
        problems.append("%s: ours refuses (%s), PyYAML reads %r\n%s" % (
            label, refused, theirs[0][1], text))
        return
    for how, value in theirs:
        difference = mcp_invoke._front_difference(ours, value)
        if difference is not None and how.startswith("safe/") and python_duplicates(text):
            counts[kind + "both read; PyYAML merged keys Python holds equal (1 and "
                   "true), which fastmcp refuses"] += 1
            return
        if difference is not None:
            problems.append("%s: differs from PyYAML %s: %s\nours %r\ntheirs %r\n%s" % (
                label, how, difference, ours, value, text))
            return
    counts[kind + "both read, match"] += 1
    if rng.random() < 0.5:
        changed = mutated(theirs[0][1], rng)
        if mcp_invoke._front_matches(ours, changed):
            problems.append("%s: a mutated entry still matches: %r\nours %r\n%s" % (
                label, changed, ours, text))
        else:
            counts[kind + "mutated entries refused"] += 1


def unfloat(obj):
    if set(obj) == {"$float"}:
        return float(obj["$float"].replace("Infinity", "inf"))
    return obj


def yaml12_pass(texts, directory, counts, problems, notes):
    """Compare mcp_invoke with YAML 1.2 (the npm package `yaml` installed in
    directory, core schema) on each (label, SKILL.md text)."""
    items = []
    for label, text in texts:
        match = FASTMCP_FRONT.match(text.lstrip("\ufeff"))
        if match is not None:
            items.append((label, text, match.group(1)))
    payload = "".join(json.dumps({"text": cut}) + "\n" for _, _, cut in items)
    script = os.path.join(directory, "check_yaml12.mjs")
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "check_yaml12.mjs")) as source, open(script, "w") as copy:
        copy.write(source.read())
    environment = dict(os.environ, NODE_NO_WARNINGS="1")
    output = subprocess.run(["node", script], input=payload, cwd=directory,
                            stdout=subprocess.PIPE, universal_newlines=True, env=environment,
                            timeout=600, check=True).stdout.split("\n")[:-1]
    assert len(output) == len(items)
    for (label, text, cut), line in zip(items, output):
        theirs = json.loads(line, object_hook=unfloat)
        try:
            ours, refused = mcp_invoke._front_matter(text), None
        except mcp_invoke._YamlRefused as exc:
            ours, refused = None, exc
        if "error" in theirs or not isinstance(theirs["value"], dict):
            known = [why for needle, why in KNOWN_YAML12_ONLY_REFUSALS
                     if needle in theirs.get("error", "")]
            if refused is not None:
                counts[kind_of(label) + ", YAML 1.2: both refuse"] += 1
            elif known:
                counts[kind_of(label) + ", YAML 1.2: 1.2 refuses, ours reads (known: %s)"
                       % known[0]] += 1
            else:
                problems.append("%s: YAML 1.2 refuses (%s), ours reads %r\n%s" % (
                    label, theirs.get("error", "not a mapping"), ours, text))
            continue
        if refused is not None:
            if label.startswith("fuzzed"):
                counts[kind_of(label) + ", YAML 1.2: ours refuses, 1.2 reads "
                       "(refusing is safe)"] += 1
            elif any(needle in refused.reason for needle in KNOWN_OURS_ONLY_REFUSALS):
                counts[kind_of(label) + ", YAML 1.2: ours refuses, 1.2 reads (by contract)"] += 1
            else:
                problems.append("%s: ours refuses (%s), YAML 1.2 reads %r\n%s" % (
                    label, refused, theirs["value"], text))
            continue
        difference = mcp_invoke._front_difference(ours, theirs["value"])
        pyyaml = pyyaml_readings(text)
        if difference is None:
            counts[kind_of(label) + ", YAML 1.2: both read, match"] += 1
        elif not isinstance(pyyaml, str) and mcp_invoke._front_matches(ours, pyyaml[0][1]):
            # The npm package reads otherwise than PyYAML and mcp_invoke, which
            # read alike: the entry of such a server does not match (a failure,
            # never a false match). Shown for review, not counted as a problem.
            counts[kind_of(label) + ", YAML 1.2: npm yaml reads otherwise, PyYAML "
                   "reads as ours (shown below)"] += 1
            notes.append("%s: npm yaml differs, PyYAML agrees with ours: %s\n%s" % (
                label, difference, text))
        else:
            problems.append("%s: differs from YAML 1.2: %s\nours %r\ntheirs %r\n%s" % (
                label, difference, ours, theirs["value"], text))


def skill_files(roots):
    """SKILL.md files under roots, at most 500."""
    found = []
    for root in roots:
        for directory, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev", ".git")]
            if "SKILL.md" in files:
                found.append(os.path.join(directory, "SKILL.md"))
                if len(found) >= 500:
                    return found
    return found


HAND_WRITTEN = [
    "---\nname: x\non: yes\n---\n",
    "---\na: |\n  x\n---\n",
    "---\na: |+\n  x\n\n---\n",
    "---\na: |+\n\n---\n",
    "---\na: >\n  a\n  b\n\n  c\n   d\n  e\n---\n",
    "---\na: =\n---\n",
    "---\na: 2024-02-30\n---\n",
    "---\na: 0b_\n---\n",
    "---\n- a\n---\n",
    "---\n&x a: 1\n---\n",
    "---\na: *x\n---\n",
    "---\na: !!str 1\n---\n",
    "---\n? a\n: b\n---\n",
    "---\na: 1\na: 2\n---\n",
    "---\na: 1\n...\n---\n",
    "---\n%YAML 1.2\na: 1\n---\n",
    "---\na:\tb\n---\n",
    "---\na: [1, [2, {b: c, d: [e]}], {}]\n---\n",
    "---\na: {\"q\":b}\n---\n",
    "---\n\"a b\": 'c''d'\n---\n",
    "---\r\na: b\r\nc: |\r\n  x\r\n  y\r\n---\r\n",
    "\ufeff---\na: b\n---\n",
    "---\na: b # c\n  # d\n---\n",
    "---\nkey:\n- a\n- b\nother: c\n---\n",
    "---\nkey:\n  - a\n    b\n  - c\n---\n",
    "---\na: \"x\\\n   y\"\n---\n",
    "---\na: 'x\n\n  y'\n---\n",
    "---\na: \"\\ud83d\\ude00\"\n---\n",
    "---\na:\n  b\n    c\n---\n",
    "---\n---\n",
    "---\n# only a comment\n---\n",
    "---\n  a: 1\n  b: 2\n---\n",
    "---\na: >2\n   x\n  y\n---\n",
    "---\na: |-\n  x\n\n\n---\n",
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--fuzz", type=int, default=2000,
                        help="how many generated front matters to edit at random")
    parser.add_argument("--seed", type=int, default=20261207)
    parser.add_argument("--roots", nargs="*", default=[
        os.path.join(HERE, "interop"), sys.prefix])
    parser.add_argument("--yaml12", metavar="DIR",
                        help="also compare with YAML 1.2: the npm package yaml is "
                        "installed in DIR")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print every disagreement, not only the first 20")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    counts = {}

    class Counter(dict):
        def __missing__(self, key):
            return 0

    counts = Counter()
    problems = []
    notes = []
    texts = []
    for index, text in enumerate(HAND_WRITTEN):
        texts.append(("hand-written #%d" % index, text))
        check(text, texts[-1][0], counts, problems, rng)
    for index in range(args.count):
        body = Gen(rng).doc()
        if rng.random() < 0.05:
            body = "".join("  " + line if line.strip() else line
                           for line in body.splitlines(True))
        text = "---\n" + body + "---\n# Body\n"
        if rng.random() < 0.1:
            text = text.replace("\n", "\r\n")
        if rng.random() < 0.05:
            text = "\ufeff" + text
        texts.append(("generated #%d" % index, text))
        check(text, texts[-1][0], counts, problems, rng)
    for index in range(args.fuzz):
        body = Gen(rng).doc()
        text = fuzzed("---\n" + body + "---\n# Body\n", rng)
        texts.append(("fuzzed #%d" % index, text))
        check(text, texts[-1][0], counts, problems, rng)
    files = skill_files(args.roots)
    read = 0
    for path in files:
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as handle:
                texts.append((path, handle.read()))
        except OSError:  # removed since it was found (a test's temporary file)
            continue
        read += 1
        check(texts[-1][1], path, counts, problems, rng)
    if args.yaml12:
        yaml12_pass(texts, args.yaml12, counts, problems, notes)
    print("hand-written: %d, generated: %d, fuzzed: %d, SKILL.md files on disk: %d"
          % (len(HAND_WRITTEN), args.count, args.fuzz, read))
    for key in sorted(counts):
        print("  %6d  %s" % (counts[key], key))
    print("  %6d  disagreements" % len(problems))
    for note in notes if args.verbose else notes[:5]:
        print("\nnote: " + note)
    for problem in problems if args.verbose else problems[:20]:
        print("\n" + problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
