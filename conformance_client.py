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
import tempfile

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

# The OAuth scenarios: a scenario server whose MCP endpoint answers 401 until the
# client authorizes with its authorization server, whose /authorize redirects at
# once (--oauth-headless reads the code from Location). Only scope-step-up
# needs a tools/call; every scenario takes one. --no-oauth-cache: each run
# starts from nothing.
AUTH = ["--oauth-headless", "--no-oauth-cache", "call", "test-tool"]
AUTH_SCENARIOS = [
    "auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3",
    "auth/basic-cimd", "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined", "auth/scope-step-up", "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none", "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch", "auth/offline-access-scope", "auth/offline-access-not-supported",
    "auth/client-credentials-jwt", "auth/client-credentials-basic",
    "auth/cross-app-access-complete-flow"]
for _name in AUTH_SCENARIOS:
    COMMANDS[_name] = AUTH
# The suite's fixed Client ID Metadata Document URL (it never fetches it).
COMMANDS["auth/basic-cimd"] = ["--oauth-client-metadata-url",
                               "https://conformance-test.local/client-metadata.json"] + AUTH

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
_CODE_FLOW = ["authorization-server-metadata", "client-registration", "authorization-request",
              "token-request", "pkce-code-challenge-sent", "pkce-s256-method-used",
              "pkce-code-verifier-sent", "pkce-verifier-matches-challenge"]
_RESOURCE = ["token-endpoint-auth-method", "resource-parameter-in-authorization",
             "resource-parameter-in-token", "resource-parameter-valid-uri",
             "resource-parameter-consistency"]
EXPECTED.update({
    "auth/metadata-default": ["prm-pathbased-requested"] + _CODE_FLOW,
    "auth/metadata-var1": ["prm-pathbased-requested"] + _CODE_FLOW,
    "auth/metadata-var2": _CODE_FLOW,
    "auth/metadata-var3": _CODE_FLOW,
    "auth/basic-cimd": ["cimd-client-id-used", "authorization-request", "token-request"],
    "auth/scope-from-www-authenticate": ["scope-from-www-authenticate"] + _CODE_FLOW,
    "auth/scope-from-scopes-supported": ["scope-from-scopes-supported"] + _CODE_FLOW,
    "auth/scope-omitted-when-undefined": ["scope-omitted-when-undefined"] + _CODE_FLOW,
    "auth/scope-step-up": ["scope-step-up-initial", "scope-step-up-escalation"],
    "auth/scope-retry-limit": ["scope-retry-limit"],
    "auth/token-endpoint-auth-basic": _RESOURCE + _CODE_FLOW,
    "auth/token-endpoint-auth-post": _RESOURCE + _CODE_FLOW,
    "auth/token-endpoint-auth-none": _RESOURCE + _CODE_FLOW,
    "auth/pre-registration": ["pre-registration-auth", "authorization-request",
                              "token-request"],
    "auth/2025-03-26-oauth-metadata-backcompat": _CODE_FLOW,
    "auth/2025-03-26-oauth-endpoint-fallback": ["client-registration", "authorization-request",
                                                "token-request"],
    "auth/resource-mismatch": ["resource-mismatch-rejected"],
    "auth/offline-access-scope": ["sep-2207-client-metadata-grant-types"],
    "auth/offline-access-not-supported": ["sep-2207-offline-access-not-requested"],
    "auth/client-credentials-jwt": ["client-credentials-jwt-verified"],
    "auth/client-credentials-basic": ["client-credentials-basic-auth"],
    "auth/cross-app-access-complete-flow": ["complete-flow-token-exchange",
                                            "complete-flow-jwt-bearer"],
})


def context_options(context):
    """The suite's client context (MCP_CONFORMANCE_CONTEXT), as mcp_invoke options:
    pre-registered credentials, a private key (to a 0600 file), the identity
    provider of cross-app access."""
    options = []
    grant = None
    if context.get("private_key_pem"):
        path = os.path.join(tempfile.gettempdir(), "mcp_invoke-conformance-%d.pem" % os.getuid())
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(context["private_key_pem"])
        options += ["--oauth-private-key-file", path]
        if context.get("signing_algorithm"):
            options += ["--oauth-signing-alg", context["signing_algorithm"]]
        grant = "client_credentials"
    if context.get("idp_token_endpoint"):
        options += ["--oauth-idp-token-endpoint", context["idp_token_endpoint"],
                    "--oauth-idp-client-id", context.get("idp_client_id", ""),
                    "--oauth-idp-id-token", context.get("idp_id_token", "")]
        grant = "jwt-bearer"
    elif context.get("client_secret") and context.get("name", "").startswith(
            "auth/client-credentials"):
        grant = "client_credentials"
    if context.get("client_id"):
        options += ["--oauth-client-id", context["client_id"]]
    if context.get("client_secret"):
        options += ["--oauth-client-secret", context["client_secret"]]
    if grant:
        options += ["--oauth-grant", grant]
    return options


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
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    args = ([python, client, "--url", url, "--timeout", "20"] + context_options(context)
            + COMMANDS[scenario])
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
