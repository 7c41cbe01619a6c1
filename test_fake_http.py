"""Tests for fake_server.py --http: Streamable HTTP, driven with http.client.

Each test starts a real server on a free port, reads the URL it prints, and
always terminates and reaps it.
"""

import base64
import contextlib
import http.client
import json
import os
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "fake_server.py")

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
ACCEPT = "application/json, text/event-stream"
TIMEOUT = 5


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

@contextlib.contextmanager
def _server(*args):
    """Run fake_server.py --http 0 ARGS; yield (process, port)."""
    proc = subprocess.Popen([sys.executable, FAKE, "--http", "0"] + list(args),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            start_new_session=True)
    try:
        url = proc.stdout.readline().decode("ascii").strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), url
        yield proc, int(url[len("http://127.0.0.1:"):-len("/mcp")])
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        proc.stdin.close()
        proc.stdout.close()


def _request(port, method, body=None, headers=None, stream=False,
             timeout=TIMEOUT):
    """(status, response, body bytes); with stream, the open response instead."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    sent = {"Accept": ACCEPT}
    if body is not None:
        sent["Content-Type"] = "application/json"
        body = json.dumps(body).encode("utf-8")
    sent.update(headers or {})
    sent = dict((k, v) for k, v in sent.items() if v is not None)
    connection.request(method, "/mcp", body, sent)
    response = connection.getresponse()
    if stream:
        return response
    data = response.read()
    connection.close()
    return response.status, response, data


def _post(port, message, headers=None, session=None, version=None):
    extra = {"Mcp-Session-Id": session, "MCP-Protocol-Version": version}
    extra.update(headers or {})
    return _request(port, "POST", message, extra)


def _events(data):
    """The SSE events in data, each a dict of its fields."""
    events = []
    for block in data.decode("utf-8").split("\n\n"):
        fields = {}
        for line in block.split("\n"):
            if line and not line.startswith(":"):
                name, _, value = line.partition(":")
                fields[name] = value[1:] if value.startswith(" ") else value
        if fields:
            events.append(fields)
    return events


def _next_event(response):
    """Read one SSE event from an open response."""
    lines = []
    while True:
        line = response.fp.readline()
        assert line, "stream ended"
        if line in (b"\n", b"\r\n"):
            if lines:
                return _events(b"".join(lines))[0]
            continue
        lines.append(line)


def _call(request_id, name, arguments=None, meta=None):
    params = {"name": name, "arguments": arguments or {}}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": params}


def _initialize(port, capabilities=None, version=LEGACY):
    """Open a legacy session; return its id."""
    status, response, body = _post(port, {
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": version,
                   "capabilities": capabilities or {},
                   "clientInfo": {"name": "test", "version": "1"}}})
    assert status == 200
    assert _answer(response, body)["result"]["protocolVersion"] == version
    session = response.getheader("Mcp-Session-Id")
    assert session and all(0x21 <= ord(c) <= 0x7e for c in session)
    assert _post(port, {"jsonrpc": "2.0",
                        "method": "notifications/initialized"},
                 session=session, version=version)[0] == 202
    return session


def _meta(version=MODERN):
    return {"io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": {}}


def _modern_headers(method, name=None, version=MODERN):
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def _json(body):
    return json.loads(body.decode("utf-8"))


def _answer(response, body):
    """The JSON-RPC answer in a JSON body, or in an SSE body's last event."""
    if response.getheader("Content-Type") == "text/event-stream":
        return _json(_events(body)[-1]["data"].encode("utf-8"))
    return _json(body)


# ---------------------------------------------------------------------------
# Process: URL, exit status, command line
# ---------------------------------------------------------------------------

def test_http_prints_its_url_and_exits_0_when_stdin_ends():
    with _server() as (proc, port):
        assert _post(port, {"jsonrpc": "2.0", "id": 1, "method": "ping"})[0] == 400
        proc.stdin.close()
        assert proc.wait(TIMEOUT) == 0


def test_http_exits_143_on_sigterm():
    with _server() as (proc, port):
        proc.terminate()
        assert proc.wait(TIMEOUT) == 143


def test_http_refuses_stdio_only_modes_and_http_modes_need_http():
    for argv in (["--http", "0", "--mode", "bytewise"], ["--mode", "sse"]):
        proc = subprocess.Popen([sys.executable, FAKE] + argv,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        out, err = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 2 and out == b""


# ---------------------------------------------------------------------------
# POST: checks every era shares
# ---------------------------------------------------------------------------

def test_post_needs_both_accept_types_json_content_and_a_local_origin():
    with _server() as (proc, port):
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        assert _post(port, ping, {"Accept": "application/json"})[0] == 406
        assert _post(port, ping, {"Accept": "text/event-stream"})[0] == 406
        assert _post(port, ping, {"Content-Type": "text/plain"})[0] == 415
        status, _, body = _post(port, ping, {"Origin": "http://evil.example"})
        assert status == 403 and "id" not in _json(body)
        assert _post(port, ping, {"Origin": "http://127.0.0.1:1"})[0] == 403
        for origin in ("http://127.0.0.1:%d" % port, "http://localhost:%d" % port):
            status, _, body = _post(port, ping, {"Origin": origin})
            assert status == 400  # past the Origin check: no session yet


def test_post_rejects_bad_json_and_batches_without_an_id():
    with _server() as (proc, port):
        status, _, body = _request(port, "POST", None,
                                   {"Content-Type": "application/json"})
        assert status == 400 and _json(body)["error"]["code"] == -32700
        status, _, body = _post(port, [{"jsonrpc": "2.0", "id": 1,
                                        "method": "ping"}])
        assert status == 400 and _json(body)["error"]["code"] == -32600
        assert "id" not in _json(body)


# ---------------------------------------------------------------------------
# Legacy era: sessions, the version header, DELETE
# ---------------------------------------------------------------------------

def test_legacy_session_answers_json_and_notifications_get_202():
    with _server() as (proc, port):
        session = _initialize(port)
        status, response, body = _post(port, _call(1, "echo", {"text": "hi"}),
                                       session=session, version=LEGACY)
        assert status == 200
        assert response.getheader("Content-Type") == "application/json"
        assert response.getheader("Mcp-Session-Id") is None
        assert _json(body) == {"jsonrpc": "2.0", "id": 1, "result": {
            "content": [{"type": "text", "text": "hi"}]}}
        status, _, body = _post(port, {"jsonrpc": "2.0", "id": "x",
                                       "result": {}},
                                session=session, version=LEGACY)
        assert status == 202 and body == b""


def test_legacy_requests_without_a_session_get_400_and_unknown_ones_404():
    with _server() as (proc, port):
        _initialize(port)
        status, _, body = _post(port, _call(1, "echo", {"text": "hi"}),
                                version=LEGACY)
        assert status == 400 and _json(body)["error"]["code"] == -32600
        status, _, body = _post(port, _call(1, "echo", {"text": "hi"}),
                                session="feed", version=LEGACY)
        assert status == 404


def test_legacy_requests_need_the_negotiated_version_header():
    with _server() as (proc, port):
        session = _initialize(port)
        call = _call(1, "echo", {"text": "hi"})
        assert _post(port, call, session=session)[0] == 400
        assert _post(port, call, session=session, version="2025-06-18")[0] == 400
        assert _post(port, call, session=session, version=LEGACY)[0] == 200
        old = _initialize(port, version="2025-03-26")  # before the header
        assert _post(port, call, session=old)[0] == 200


def test_legacy_delete_ends_the_session():
    with _server() as (proc, port):
        session = _initialize(port)
        headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}
        assert _request(port, "DELETE", None, {"Accept": None})[0] == 400
        assert _request(port, "DELETE", None, headers)[0] == 200
        assert _request(port, "DELETE", None, headers)[0] == 404
        assert _post(port, _call(1, "echo", {"text": "hi"}),
                     session=session, version=LEGACY)[0] == 404


def test_failed_initialize_opens_no_session():
    with _server("--mode", "error-init") as (proc, port):
        status, response, body = _post(port, {
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}}})
        assert status == 200 and "error" in _json(body)
        assert response.getheader("Mcp-Session-Id") is None


def test_legacy_only_server_answers_a_modern_request_without_a_modern_error():
    with _server() as (proc, port):
        status, _, body = _post(port, {
            "jsonrpc": "2.0", "id": 1, "method": "server/discover",
            "params": {"_meta": _meta()}},
            _modern_headers("server/discover"))
        assert status == 400
        assert _json(body)["error"]["code"] not in (-32020, -32021, -32022)


# ---------------------------------------------------------------------------
# SSE answers, the GET stream, resumption
# ---------------------------------------------------------------------------

def test_sse_mode_answers_with_one_message_event():
    with _server("--mode", "sse") as (proc, port):
        session = _initialize(port)
        status, response, body = _post(port, _call(1, "echo", {"text": "hi"}),
                                       session=session, version=LEGACY)
        assert status == 200
        assert response.getheader("Content-Type") == "text/event-stream"
        events = _events(body)
        assert len(events) == 1 and events[0]["event"] == "message"
        assert events[0]["id"]
        assert _json(events[0]["data"].encode())["result"]["content"][0][
            "text"] == "hi"


def test_default_mode_streams_when_there_is_something_before_the_answer():
    with _server() as (proc, port):
        session = _initialize(port)
        status, response, body = _post(port, _call(1, "log"),
                                       session=session, version=LEGACY)
        assert response.getheader("Content-Type") == "text/event-stream"
        messages = [_json(e["data"].encode()) for e in _events(body)]
        assert [m.get("method") for m in messages] == [
            "notifications/message", "notifications/message", None]
        assert messages[-1]["id"] == 1
        ids = [e["id"] for e in _events(body)]
        assert len(set(ids)) == 3


def test_legacy_ask_tool_asks_on_the_post_stream_and_takes_the_answer_by_post():
    with _server() as (proc, port):
        session = _initialize(port, {"elicitation": {"form": {}}})
        response = _request(port, "POST", _call(1, "ask_name"), {
            "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY},
            stream=True)
        assert response.getheader("Content-Type") == "text/event-stream"
        ask = _json(_next_event(response)["data"].encode())
        assert ask["method"] == "elicitation/create" and ask["id"] == "q1"
        status, _, body = _post(port, {"jsonrpc": "2.0", "id": "q1", "result": {
            "action": "accept", "content": {"name": "Ada"}}},
            session=session, version=LEGACY)
        assert status == 202 and body == b""
        answer = _json(_next_event(response)["data"].encode())
        assert answer["result"]["content"][0]["text"] == \
            'name: accept {"name":"Ada"}'
        assert response.read() == b""  # the stream ends with the answer


def test_get_opens_one_stream_per_session_that_delete_ends():
    with _server() as (proc, port):
        session = _initialize(port)
        headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}
        assert _request(port, "GET", None, dict(
            headers, Accept="application/json"))[0] == 406
        assert _request(port, "GET", None, {"Accept": "text/event-stream"})[0] == 400
        stream = _request(port, "GET", None, dict(
            headers, Accept="text/event-stream"), stream=True)
        assert stream.status == 200
        assert stream.getheader("Content-Type") == "text/event-stream"
        assert _request(port, "GET", None, dict(
            headers, Accept="text/event-stream"))[0] == 409
        assert _request(port, "DELETE", None, headers)[0] == 200
        assert stream.read() == b""  # the session's end closes it


def test_no_get_mode_answers_get_with_405():
    with _server("--mode", "no-get") as (proc, port):
        session = _initialize(port)
        assert _request(port, "GET", None, {
            "Accept": "text/event-stream", "Mcp-Session-Id": session,
            "MCP-Protocol-Version": LEGACY})[0] == 405


def test_sse_retry_closes_the_call_stream_and_the_answer_arrives_on_get():
    with _server("--mode", "sse-retry") as (proc, port):
        session = _initialize(port)
        status, response, body = _post(port, _call(1, "echo", {"text": "hi"}),
                                       session=session, version=LEGACY)
        assert status == 200
        assert response.getheader("Content-Type") == "text/event-stream"
        (priming,) = _events(body)  # then the connection closed
        assert priming["retry"] == "100" and priming["data"] == ""
        assert "event" not in priming
        status, response, body = _request(port, "GET", None, {
            "Accept": "text/event-stream", "Mcp-Session-Id": session,
            "MCP-Protocol-Version": LEGACY, "Last-Event-ID": priming["id"]})
        assert status == 200
        (event,) = _events(body)
        assert event["id"] != priming["id"]
        assert _json(event["data"].encode())["result"]["content"][0][
            "text"] == "hi"
        assert _request(port, "GET", None, {
            "Accept": "text/event-stream", "Mcp-Session-Id": session,
            "MCP-Protocol-Version": LEGACY, "Last-Event-ID": "nope"})[0] == 400


def test_hang_call_holds_the_post_open_without_an_answer():
    with _server("--mode", "hang-call") as (proc, port):
        session = _initialize(port)
        try:
            _request(port, "POST", _call(1, "echo", {"text": "hi"}), {
                "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY},
                timeout=0.5)
        except OSError:  # socket.timeout is one
            pass
        else:
            raise AssertionError("answered")


# ---------------------------------------------------------------------------
# Modern era (2026-07-28): no sessions, mirrored headers
# ---------------------------------------------------------------------------

def _modern_call(port, name, headers, arguments=None):
    return _post(port, _call(1, name, arguments, _meta()), headers)


def test_modern_answers_without_a_session_when_headers_mirror_the_body():
    with _server("--era", "modern") as (proc, port):
        status, response, body = _modern_call(
            port, "echo", _modern_headers("tools/call", "echo"), {"text": "hi"})
        assert status == 200 and response.getheader("Mcp-Session-Id") is None
        assert _json(body)["result"]["content"][0]["text"] == "hi"
        assert _json(body)["result"]["resultType"] == "complete"
        status, _, body = _post(port, {
            "jsonrpc": "2.0", "id": 2, "method": "resources/read",
            "params": {"uri": "fake://item/1", "_meta": _meta()}},
            _modern_headers("resources/read", "fake://item/1"))
        assert status == 200 and "contents" in _json(body)["result"]


def test_modern_rejects_missing_or_mismatched_headers_with_header_mismatch():
    with _server("--era", "modern") as (proc, port):
        good = _modern_headers("tools/call", "echo")
        bad = [dict(good, **{"MCP-Protocol-Version": None}),
               dict(good, **{"MCP-Protocol-Version": "2025-11-25"}),
               dict(good, **{"Mcp-Method": None}),
               dict(good, **{"Mcp-Method": "tools/list"}),
               dict(good, **{"Mcp-Name": None}),
               dict(good, **{"Mcp-Name": "add"})]
        for headers in bad:
            status, _, body = _modern_call(port, "echo", headers, {"text": "x"})
            assert status == 400, headers
            assert _json(body)["id"] == 1
            assert _json(body)["error"]["code"] == -32020, headers


def test_modern_decodes_a_base64_mcp_name():
    with _server("--era", "modern") as (proc, port):
        name = "=?base64?%s?=" % base64.b64encode(b"echo").decode("ascii")
        status, _, body = _modern_call(
            port, "echo", _modern_headers("tools/call", name), {"text": "x"})
        assert status == 200 and "result" in _json(body)


def test_modern_status_follows_the_error():
    with _server("--era", "modern") as (proc, port):
        status, _, body = _post(port, {
            "jsonrpc": "2.0", "id": 1, "method": "x/unknown",
            "params": {"_meta": _meta()}}, _modern_headers("x/unknown"))
        assert status == 404 and _json(body)["error"]["code"] == -32601
        status, _, body = _post(port, {
            "jsonrpc": "2.0", "id": 1, "method": "tools/list",
            "params": {"_meta": _meta("2099-01-01")}},
            _modern_headers("tools/list", version="2099-01-01"))
        assert status == 400 and _json(body)["error"]["code"] == -32022
        assert _json(body)["error"]["data"]["supported"] == [MODERN]
        status, _, body = _modern_call(
            port, "nope", _modern_headers("tools/call", "nope"))
        assert status == 200 and _json(body)["error"]["code"] == -32602


def test_modern_refuses_initialize_naming_its_versions():
    with _server("--era", "modern") as (proc, port):
        status, response, body = _post(port, {
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}}})
        assert status == 400 and response.getheader("Mcp-Session-Id") is None
        error = _json(body)["error"]
        assert error["code"] == -32020 and MODERN in error["message"]


def test_modern_has_no_get_delete_sessions_or_client_responses():
    with _server("--era", "modern") as (proc, port):
        assert _request(port, "GET", None, {"Accept": "text/event-stream"})[0] == 405
        assert _request(port, "DELETE", None)[0] == 405
        status, response, _ = _modern_call(
            port, "echo", dict(_modern_headers("tools/call", "echo"),
                               **{"Mcp-Session-Id": "stale"}), {"text": "x"})
        assert status == 200 and response.getheader("Mcp-Session-Id") is None
        assert _post(port, {"jsonrpc": "2.0", "id": "q1", "result": {}})[0] == 400
        assert _post(port, {"jsonrpc": "2.0", "method": "notifications/x"})[0] == 202


def test_modern_ask_tool_answers_input_required_on_an_sse_stream_without_ids():
    with _server("--era", "modern", "--mode", "sse") as (proc, port):
        meta = dict(_meta(), **{"io.modelcontextprotocol/clientCapabilities":
                                {"elicitation": {}}})
        status, response, body = _post(port, _call(1, "ask_name", None, meta),
                                       _modern_headers("tools/call", "ask_name"))
        assert response.getheader("Content-Type") == "text/event-stream"
        (event,) = _events(body)
        assert "id" not in event  # 2026-07-28 streams are not resumable
        assert _json(event["data"].encode())["result"]["resultType"] == \
            "input_required"


# ---------------------------------------------------------------------------
# Dual era: initialize opens a legacy session, the rest is modern
# ---------------------------------------------------------------------------

def test_dual_serves_legacy_sessions_and_sessionless_modern_requests():
    with _server("--era", "dual") as (proc, port):
        session = _initialize(port)
        status, _, body = _post(port, _call(1, "echo", {"text": "old"}),
                                session=session, version=LEGACY)
        assert status == 200 and "resultType" not in _json(body)["result"]
        status, response, body = _modern_call(
            port, "echo", _modern_headers("tools/call", "echo"), {"text": "new"})
        assert status == 200 and response.getheader("Mcp-Session-Id") is None
        assert _json(body)["result"]["resultType"] == "complete"
        status, _, body = _post(port, _call(2, "echo", {"text": "x"}))
        assert status == 400 and _json(body)["error"]["code"] == -32020
