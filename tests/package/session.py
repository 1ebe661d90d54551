"""A short MCP session over stdio with an installed `toolcell`, with nothing
but the Python standard library: proves that the first-party plugins
embedded in the binary load and work.

Usage: python3 session.py TOOLCELL_BIN DIR

Starts `TOOLCELL_BIN serve DIR` (DIR must hold hello.txt, whose first line
is `hello from the package`), writes JSON-RPC lines (initialize,
notifications/initialized, tools/list, tools/call), then closes stdin.
Prints `ok - NAME` or `FAIL - NAME` per check; exits 1 if any failed.
"""

import json
import os
import queue
import subprocess
import sys
import threading

TIMEOUT = 120  # seconds per answer: the first start compiles every plugin


def main():
    binary, folder = sys.argv[1], os.path.realpath(sys.argv[2])
    server = subprocess.Popen(
        [binary, "serve", folder],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines = queue.Queue()

    def read():
        for line in server.stdout:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    failed = 0

    def check(name, ok, detail=""):
        nonlocal failed
        print(("ok - " if ok else "FAIL - ") + name + ("" if ok else f": {detail}"))
        failed += not ok

    def send(message):
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()

    def request(id, method, params):
        send({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        while True:
            line = lines.get(timeout=TIMEOUT)
            message = json.loads(line)
            if message.get("id") == id:
                return message

    try:
        init = request(1, "initialize", {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "package-check", "version": "1"},
        })
        check("initialize answers with serverInfo toolcell",
              init.get("result", {}).get("serverInfo", {}).get("name") == "toolcell", init)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})

        listed = request(2, "tools/list", {})
        names = {tool["name"] for tool in listed.get("result", {}).get("tools", [])}
        # One tool of each plugin served by default: fs, search and git.
        for name in ["read_file", "grep", "git_status"]:
            check(f"tools/list offers {name}", name in names, sorted(names))

        hello = os.path.join(folder, "hello.txt")
        read = request(3, "tools/call", {"name": "read_file", "arguments": {"path": hello}})
        result = read.get("result", {})
        text = "".join(c.get("text", "") for c in result.get("content", []))
        check("read_file reads a file in the served folder",
              not result.get("isError") and "hello from the package" in text, read)

        outside = os.path.realpath(__file__)
        denied = request(4, "tools/call", {"name": "read_file", "arguments": {"path": outside}})
        result = denied.get("result", {})
        text = "".join(c.get("text", "") for c in result.get("content", []))
        check("read_file refuses a file outside the served folder",
              result.get("isError") is True and "A short MCP session" not in text, denied)

        found = request(5, "tools/call", {
            "name": "grep", "arguments": {"pattern": "from the package", "path": folder},
        })
        result = found.get("result", {})
        text = "".join(c.get("text", "") for c in result.get("content", []))
        check("grep finds the line", not result.get("isError") and "hello.txt" in text, found)
    except queue.Empty:
        check("the server answers", False, f"no answer within {TIMEOUT} s")
    finally:
        server.stdin.close()
        try:
            code = server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            code = "still running 30 s after stdin closed"
    check("the server exits 0 when stdin closes", code == 0, code)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
