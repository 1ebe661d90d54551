"""Start an unpacked Toolcell bundle's server as Claude Desktop does, and
check which folders its tools see.

Usage: python tests/bundle/desktop.py UNPACKED_DIR [MCPB_CONFIG_JS]

UNPACKED_DIR is a bundle unpacked by `mcpb unpack`. For each choice of
folders in the extension's settings, the command comes from the unpacked
manifest.json: `${__dirname}` becomes UNPACKED_DIR and each
`${user_config.KEY}` the chosen value (a list standing alone as an argument
spreads into one argument per value, an empty list into none; an option not
chosen takes its `default`). The server runs from a working directory the
user did not choose, which holds files of its own (and a plugins.toml that
would mount it), and is driven with the official MCP Python SDK. With
MCPB_CONFIG_JS (`@anthropic-ai/mcpb`'s dist/shared/config.js), the command
is also computed by mcpb's own `getMcpConfigForManifest` and must be the
same.

Prints `ok - NAME` or `FAIL - NAME: why` for each check; exits 1 if any
failed.
"""

import asyncio
import copy
import json
import os
import re
import subprocess
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

PLATFORMS = {"darwin": "darwin", "win32": "win32", "cygwin": "win32"}
CALL_TIMEOUT = 120  # seconds; the first start may compile the plugins


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, ok, why=""):
        if ok:
            self.passed += 1
            print(f"ok - {name}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL - {name}: {why}", flush=True)


def substitute(value, variables):
    """`${NAME}` in `value` replaced as mcpb's replaceVariables does."""
    if isinstance(value, str):
        for name, replacement in variables.items():
            if not isinstance(replacement, list):
                value = value.replace("${" + name + "}", replacement)
        return value
    if isinstance(value, list):
        result = []
        for item in value:
            whole = re.fullmatch(r"\$\{(user_config\.[^}]+)\}", item) if isinstance(item, str) else None
            if whole and whole.group(1) in variables:
                replacement = variables[whole.group(1)]
                result.extend(replacement if isinstance(replacement, list) else [replacement])
            else:
                result.append(substitute(item, variables))
        return result
    if isinstance(value, dict):
        return {key: substitute(item, variables) for key, item in value.items()}
    return value


def launch_config(manifest, dirname, user_config):
    """The `mcp_config` Claude Desktop runs for `manifest` unpacked in `dirname`."""
    config = copy.deepcopy(manifest["server"]["mcp_config"])
    overrides = config.pop("platform_overrides", {})
    config.update(overrides.get(PLATFORMS.get(sys.platform, "linux"), {}))
    chosen = {}
    for key, option in manifest.get("user_config", {}).items():
        if "default" in option:
            chosen[key] = option["default"]
    chosen.update(user_config)
    variables = {"__dirname": dirname, "pathSeparator": os.sep, "/": os.sep}
    for key, value in chosen.items():
        if isinstance(value, list):
            variables[f"user_config.{key}"] = [str(v) for v in value]
        elif isinstance(value, bool):
            variables[f"user_config.{key}"] = "true" if value else "false"
        else:
            variables[f"user_config.{key}"] = str(value)
    return substitute(config, variables)


MCPB_SCRIPT = """
import { getMcpConfigForManifest } from process.env.MCPB_CONFIG_URL;
let input = "";
for await (const chunk of process.stdin) input += chunk;
const { manifest, extensionPath, userConfig } = JSON.parse(input);
const config = await getMcpConfigForManifest({
  manifest, extensionPath, userConfig, systemDirs: {}, pathSeparator: "/",
});
process.stdout.write(JSON.stringify(config));
"""


def mcpb_launch_config(config_js, manifest, dirname, user_config):
    """The same, computed by mcpb's getMcpConfigForManifest."""
    url = "file://" + os.path.abspath(config_js)
    script = MCPB_SCRIPT.replace("process.env.MCPB_CONFIG_URL", json.dumps(url))
    request = {"manifest": manifest, "extensionPath": dirname, "userConfig": user_config}
    out = subprocess.run(
        ["node", "--input-type=module", "-e", script],
        input=json.dumps(request), capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout)


def text_of(result):
    return "".join(getattr(part, "text", "") for part in result.content)


async def serve(config, cwd, log, body):
    """Runs `config` from `cwd` and calls `body(session, tool_names)`."""
    params = StdioServerParameters(command=config["command"], args=config.get("args", []),
                                   env=config.get("env"), cwd=cwd)
    async with stdio_client(params, errlog=log) as (read, write):
        async with ClientSession(read, write) as session:
            await asyncio.wait_for(session.initialize(), CALL_TIMEOUT)
            listed = await asyncio.wait_for(session.list_tools(), CALL_TIMEOUT)
            await body(session, {tool.name for tool in listed.tools})


async def call(session, tool, arguments):
    return await asyncio.wait_for(session.call_tool(tool, arguments), CALL_TIMEOUT)


async def main(unpacked, config_js):
    checks = Checks()
    unpacked = os.path.realpath(unpacked)
    with open(os.path.join(unpacked, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    binary = os.path.join(unpacked, manifest["server"]["entry_point"])

    with tempfile.TemporaryDirectory() as raw:
        base = os.path.realpath(raw)
        site = os.path.join(base, "projects", "site")
        other = os.path.join(base, "projects", "other")
        out = os.path.join(base, "projects", "out")
        cwd = os.path.join(base, "desktop-cwd")
        for folder in (site, other, out, cwd):
            os.makedirs(folder)
        files = {
            os.path.join(site, "notes.txt"): "site notes\n",
            os.path.join(other, "secret.txt"): "sibling secret\n",
            os.path.join(cwd, "private.txt"): "working directory private\n",
            # Would serve the working directory, were it read.
            os.path.join(cwd, "plugins.toml"):
                '[[plugin]]\nname = "fs"\npath = "builtin:fs"\nmounts = [{ host = ".", mode = "rw" }]\n',
        }
        for path, text in files.items():
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        log_path = os.path.join(base, "server.log")

        names = {site: "SITE", out: "OUT"}  # for the checks' names

        def launch(name, user_config, expected_args):
            config = launch_config(manifest, unpacked, user_config)
            args = ["serve", "--named-only", *expected_args]
            shown = " ".join(names.get(arg, arg) for arg in args)
            checks.check(f"{name}: the command is server/toolcell {shown}",
                         config["command"] == binary and config.get("args") == args,
                         json.dumps(config))
            if config_js:
                theirs = mcpb_launch_config(config_js, manifest, unpacked, user_config)
                checks.check(f"{name}: mcpb's getMcpConfigForManifest gives the same command",
                             theirs == config, f"{json.dumps(theirs)} != {json.dumps(config)}")
            return config

        async def refused(session, name, arguments, secret):
            result = await call(session, "read_file", arguments)
            checks.check(name, result.is_error and secret not in text_of(result),
                         f"is_error={result.is_error} {text_of(result)!r}")

        # One folder chosen, none writable.
        async def one_folder(session, tools):
            checks.check("one folder: read_file is listed", "read_file" in tools, sorted(tools))
            checks.check("one folder: write_file is not listed", "write_file" not in tools,
                         sorted(tools))
            for how, path in (("absolute", os.path.join(site, "notes.txt")),
                              ("relative", "notes.txt")):
                result = await call(session, "read_file", {"path": path})
                checks.check(f"one folder: read_file of a file in it works ({how} path)",
                             not result.is_error and text_of(result) == "site notes\n",
                             f"is_error={result.is_error} {text_of(result)!r}")
            await refused(session, "one folder: a file in the working directory is refused "
                          "(absolute path)", {"path": os.path.join(cwd, "private.txt")},
                          "working directory private")
            await refused(session, "one folder: a file in the working directory is refused "
                          "(relative path)", {"path": "private.txt"}, "working directory private")
            await refused(session, "one folder: a file in a sibling folder is refused "
                          "(absolute path)", {"path": os.path.join(other, "secret.txt")},
                          "sibling secret")
            await refused(session, "one folder: a file in a sibling folder is refused "
                          "(../other/secret.txt)", {"path": "../other/secret.txt"},
                          "sibling secret")

        # A read folder and a writable one.
        async def writable(session, tools):
            checks.check("read and writable folders: write_file is listed",
                         "write_file" in tools, sorted(tools))
            if "write_file" not in tools:
                return
            target = os.path.join(out, "new.txt")
            result = await call(session, "write_file", {"path": target, "content": "written\n"})
            on_disk = open(target, encoding="utf-8").read() if os.path.exists(target) else None
            checks.check("read and writable folders: write_file writes in the writable folder",
                         not result.is_error and on_disk == "written\n",
                         f"is_error={result.is_error} {text_of(result)!r} on disk: {on_disk!r}")
            target = os.path.join(site, "new.txt")
            result = await call(session, "write_file", {"path": target, "content": "no\n"})
            checks.check("read and writable folders: write_file to the read-only folder is refused",
                         result.is_error and not os.path.exists(target),
                         f"is_error={result.is_error} {text_of(result)!r}")
            result = await call(session, "read_file", {"path": "notes.txt"})
            checks.check("read and writable folders: relative paths start from the read folder",
                         not result.is_error and text_of(result) == "site notes\n",
                         f"is_error={result.is_error} {text_of(result)!r}")

        # No folder chosen.
        async def no_folder(session, tools):
            result = await call(session, "read_file", {"path": "notes.txt"})
            checks.check("no folder: read_file is an error saying no folder was chosen",
                         result.is_error and "no folder was chosen" in text_of(result),
                         f"is_error={result.is_error} {text_of(result)!r}")
            await refused(session, "no folder: a file in the working directory is refused",
                          {"path": os.path.join(cwd, "private.txt")}, "working directory private")

        # The same folder chosen in both lists.
        async def both(session, tools):
            target = os.path.join(site, "both.txt")
            result = await call(session, "write_file", {"path": target, "content": "both\n"})
            checks.check("a folder chosen in both lists: write_file writes in it",
                         not result.is_error and os.path.exists(target),
                         f"is_error={result.is_error} {text_of(result)!r}")

        scenarios = [
            ("one folder", {"folders": [site]}, [site, "--writable"], one_folder),
            ("read and writable folders", {"folders": [site], "writable_folders": [out]},
             [site, "--writable", out], writable),
            ("no folder", {}, ["--writable"], no_folder),
            ("a folder chosen in both lists", {"folders": [site], "writable_folders": [site]},
             [site, "--writable", site], both),
        ]
        for name, user_config, expected_args, body in scenarios:
            config = launch(name, user_config, expected_args)
            with open(log_path, "w") as log:
                try:
                    await serve(config, cwd, log, body)
                except Exception as error:  # noqa: BLE001 - any failure is a failed check
                    checks.check(f"{name}: the server runs", False, repr(error))
                    with open(log_path) as f:
                        sys.stdout.write(f.read()[-4000:])
    return checks


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    result = asyncio.run(main(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else None))
    sys.exit(1 if result.failed else 0)
