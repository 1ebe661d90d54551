"""Drive `toolcell serve` with the official Python MCP SDK.

Usage: python tests/clients/python_smoke.py TOOLCELL_BINARY

Starts the server on a temporary directory (the embedded default config:
the fs plugin with the current directory mounted read-only), lists the
tools, reads a file, checks that a path outside the mount is refused as a
tool error, and that file_info returns structured content. Exits non-zero
on the first mismatch.
"""

import asyncio
import os
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(binary: str) -> None:
    with tempfile.TemporaryDirectory() as raw:
        work = os.path.realpath(raw)
        with open(os.path.join(work, "notes.txt"), "w") as f:
            f.write("first line\nsecond line\n")
        params = StdioServerParameters(command=binary, args=["serve"], cwd=work)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                assert init.server_info.name == "toolcell", init
                tools = {tool.name: tool for tool in (await session.list_tools()).tools}
                expected = {"read_file", "tail", "file_info", "list_directory"}
                assert expected <= set(tools), sorted(tools)
                assert tools["read_file"].annotations.read_only_hint is True
                assert tools["file_info"].output_schema is not None

                result = await session.call_tool("read_file", {"path": "notes.txt"})
                assert not result.is_error, result
                assert result.content[0].text == "first line\nsecond line\n", result

                result = await session.call_tool("read_file", {"path": "/etc/passwd"})
                assert result.is_error, result
                assert "outside" in result.content[0].text, result

                result = await session.call_tool("file_info", {"path": "notes.txt"})
                assert not result.is_error, result
                assert result.structured_content["size"] == 23, result.structured_content
                assert result.structured_content["kind"] == "file"

                await session.send_ping()
    print("python-sdk: 1 passed, 0 failed")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
