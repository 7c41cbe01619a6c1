#!/usr/bin/env python3
"""Adapter between the MCP client conformance suite and mcp_invoke.py.

Two modes, stdlib only (Python 3.6+):

  conformance_client.py [ARGS...] URL
      What the suite runs: `conformance client --command "python3
      conformance_client.py" --scenario NAME` appends the scenario server's URL
      as the last argument and names the scenario in MCP_CONFORMANCE_SCENARIO.
      The scenario picks one mcp_invoke.py command line, which replaces this
      process (so the suite's timeout signal reaches mcp_invoke directly), with
      stdin on /dev/null: the suite gives the client a pipe it never closes.

  conformance_client.py --verify RESULTS_DIR SCENARIO...
      After `conformance client ... -o RESULTS_DIR`: each scenario's newest
      checks.json must hold every check this client is meant to pass, each a
      SUCCESS, and no FAILURE or WARNING. This closes a hole in the suite's own
      verdict: a client that never sends initialize gets "0/0" and PASSED.

MCP_INVOKE names the client (default: mcp_invoke.py beside this file);
MCP_INVOKE_PYTHON the interpreter (default: this one).
"""
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Scenario -> the mcp_invoke.py arguments after `--url URL`.
COMMANDS = {
    # Only the handshake is checked; ping is the least beyond it.
    "initialize": ["ping"],
    # The server must see tools/call add_numbers with numeric a and b.
    "tools_call": ["call", "add_numbers", '{"a": 2, "b": 3}'],
    # The tool asks a form elicitation whose five fields all carry defaults;
    # the answer must be accept, with every field present and of its type.
    "elicitation-sep1034-client-defaults":
        ["--elicit", "defaults", "call", "test_client_elicitation_defaults"],
    # The tool's SSE stream closes after a priming event (id, retry: 500);
    # the result only comes on a GET sent 500 ms later with Last-Event-ID.
    "sse-retry": ["call", "test_reconnection"],
}

# Scenario -> the check ids that must each be SUCCESS in checks.json.
EXPECTED = {
    "initialize": ["mcp-client-initialization"],
    "tools_call": ["tool-add-numbers"],
    "elicitation-sep1034-client-defaults": [
        "client-elicitation-sep1034-%s-default" % kind
        for kind in ("string", "integer", "number", "enum", "boolean")],
    "sse-retry": ["client-sse-graceful-reconnect", "client-sse-retry-timing",
                  "client-sse-last-event-id"],
}


def run(argv):
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if not argv:
        sys.exit("conformance_client: no server URL argument")
    url = argv[-1]
    if scenario not in COMMANDS:
        sys.exit("conformance_client: scenario %r is not mapped (mapped: %s)"
                 % (scenario, ", ".join(sorted(COMMANDS))))
    client = os.environ.get("MCP_INVOKE", os.path.join(HERE, "mcp_invoke.py"))
    python = os.environ.get("MCP_INVOKE_PYTHON", sys.executable)
    args = [python, client, "--url", url, "--timeout", "20"] + COMMANDS[scenario]
    sys.stderr.write("conformance_client: %s: %s\n" % (scenario, " ".join(args)))
    sys.stderr.flush()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.execv(python, args)


def verify(results_dir, scenarios):
    bad = 0
    for scenario in scenarios:
        runs = sorted(glob.glob(os.path.join(results_dir, scenario + "-*", "checks.json")))
        if not runs:
            print("conformance: %s: no checks.json under %s" % (scenario, results_dir))
            bad += 1
            continue
        with open(runs[-1]) as f:
            checks = json.load(f)
        status = {}
        for check in checks:
            if check.get("status") in ("SUCCESS", "FAILURE", "WARNING"):
                # A FAILURE or WARNING for an id outranks a SUCCESS for it.
                if status.get(check["id"]) in (None, "SUCCESS"):
                    status[check["id"]] = check["status"]
        problems = ["%s %s" % (i, s) for i, s in sorted(status.items()) if s != "SUCCESS"]
        problems += ["%s missing" % i for i in EXPECTED.get(scenario, []) if i not in status]
        if problems:
            bad += 1
            print("conformance: %s FAILED: %s" % (scenario, "; ".join(problems)))
        else:
            print("conformance: %s ok (%d checks)" % (scenario, len(status)))
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--verify"]:
        if len(sys.argv) < 4:
            sys.exit("usage: conformance_client.py --verify RESULTS_DIR SCENARIO...")
        sys.exit(verify(sys.argv[2], sys.argv[3:]))
    run(sys.argv[1:])
