#!/usr/bin/env python3
"""server.json, the MCP Registry entry for Toolcell's Claude Desktop bundles.

Usage:
  server_json.py check [--released] [--bundles DIR] [--file FILE]
  server_json.py update --bundles DIR [--file FILE] [--output FILE]
  server_json.py reset [--file FILE]

`check` checks FILE (default: server.json at the repository root) offline:
the fields the MCP Registry requires (schema 2025-12-11), the name and the
release URLs derived from `repository` in Cargo.toml, the version of
host/Cargo.toml, one `mcpb` package per released platform, every
`fileSha256` 64 lowercase hex digits. The file is either released (every
hash real) or not yet released (every hash 64 zeros, the marker this project
uses until a release writes real ones); a mix is refused. `--released`
refuses the marker; `--bundles DIR` also compares each hash with the bundle
of that name in DIR.

`update` rewrites FILE (or writes OUTPUT) from a folder of built bundles
(`toolcell-VERSION-PLATFORM.mcpb`, as `toolcell bundle` names them): the
version, the URLs and every `fileSha256`. Every platform's bundle must be
there. The release workflow runs it (.github/workflows/mcpb-bundles.yml).

`reset` rewrites FILE for the version and owner in Cargo.toml, not yet
released (every hash the marker): after a version bump, or once
`repository` names the real owner.

Only the standard library: it runs with any Python 3.11 or later.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

# The release targets (dist-workspace.toml) and the bundle platform of each,
# as `toolcell bundle` names it (host/src/cli/bundle.rs: Node's OS and
# architecture names).
TARGETS = {
    "x86_64-unknown-linux-gnu": "linux-x64",
    "aarch64-unknown-linux-gnu": "linux-arm64",
    "x86_64-apple-darwin": "darwin-x64",
    "aarch64-apple-darwin": "darwin-arm64",
    "x86_64-pc-windows-msvc": "win32-x64",
}
PLATFORMS = list(TARGETS.values())

UNRELEASED = "0" * 64
SHA256 = re.compile(r"^[a-f0-9]{64}$")
NAME = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")
GITHUB = re.compile(r"^https://github\.com/([A-Za-z0-9-]+)/([A-Za-z0-9._-]+?)(?:\.git)?/?$")


class Invalid(Exception):
    """server.json, or a folder of bundles, is not what the release needs."""


def project(root: Path = ROOT) -> dict:
    """The version, owner and repository name, from the Cargo manifests."""
    workspace = tomllib.loads((root / "Cargo.toml").read_text())
    host = tomllib.loads((root / "host" / "Cargo.toml").read_text())["package"]
    shared = workspace.get("workspace", {}).get("package", {})

    def field(key: str) -> str:
        value = host.get(key)
        if isinstance(value, dict) and value.get("workspace"):
            value = shared.get(key)
        if not isinstance(value, str):
            raise Invalid(f"host/Cargo.toml has no {key}")
        return value

    version = field("version")
    repository = field("repository")
    found = GITHUB.match(repository)
    if not found:
        raise Invalid(
            f"repository {repository!r} in Cargo.toml is not a GitHub repository URL "
            "(https://github.com/OWNER/NAME): the bundles' URLs and the io.github name "
            "are derived from it"
        )
    owner, name = found.groups()
    return {"version": version, "owner": owner, "repo": name, "repository": f"https://github.com/{owner}/{name}"}


def bundle_name(version: str, platform: str) -> str:
    return f"toolcell-{version}-{platform}.mcpb"


def bundle_url(info: dict, platform: str) -> str:
    version = info["version"]
    return f"{info['repository']}/releases/download/v{version}/{bundle_name(version, platform)}"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def bundle_hashes(folder: Path, version: str) -> dict[str, str]:
    """The SHA-256 of each platform's bundle in FOLDER; every one must exist."""
    if not folder.is_dir():
        raise Invalid(f"{folder}: not a folder of bundles")
    missing = [bundle_name(version, p) for p in PLATFORMS if not (folder / bundle_name(version, p)).is_file()]
    if missing:
        present = sorted(p.name for p in folder.glob("*.mcpb")) or ["none"]
        raise Invalid(
            f"{folder}: missing {', '.join(missing)} (found: {', '.join(present)}); "
            f"build them with `toolcell bundle --target TRIPLE --binary FILE -o {folder}`"
        )
    return {p: sha256(folder / bundle_name(version, p)) for p in PLATFORMS}


def check(document: dict, info: dict, released: bool = False, hashes: dict[str, str] | None = None) -> str:
    """Checks DOCUMENT; returns "released" or "unreleased", or raises Invalid with every problem."""
    problems: list[str] = []
    expect_name = f"io.github.{info['owner']}/{info['repo']}"

    def equal(key: str, value, expected) -> None:
        if value != expected:
            problems.append(f"{key} is {value!r}, expected {expected!r}")

    if not isinstance(document, dict):
        raise Invalid("server.json is not a JSON object")
    for key in ("$schema", "name", "description", "version", "packages"):
        if key not in document:
            problems.append(f"required field {key!r} is missing")
    equal("$schema", document.get("$schema"), SCHEMA)
    name = document.get("name")
    if not isinstance(name, str) or not NAME.match(name) or not 3 <= len(name) <= 200:
        problems.append(f"name {name!r} must be NAMESPACE/NAME (reverse DNS, exactly one '/')")
    equal("name", name, expect_name)
    description = document.get("description")
    if not isinstance(description, str) or not 1 <= len(description) <= 100:
        problems.append("description must be 1 to 100 characters")
    equal("version", document.get("version"), info["version"])
    repository = document.get("repository")
    if repository is not None:
        equal("repository", repository, {"url": info["repository"], "source": "github"})

    packages = document.get("packages")
    states = set()
    if not isinstance(packages, list):
        problems.append("packages must be a list")
        packages = []
    seen: dict[str, int] = {}
    for index, package in enumerate(packages):
        where = f"packages[{index}]"
        if not isinstance(package, dict):
            problems.append(f"{where} is not an object")
            continue
        equal(f"{where}.registryType", package.get("registryType"), "mcpb")
        equal(f"{where}.transport", package.get("transport"), {"type": "stdio"})
        if "version" in package:
            equal(f"{where}.version", package.get("version"), info["version"])
        identifier = package.get("identifier")
        platform = next((p for p in PLATFORMS if identifier == bundle_url(info, p)), None)
        if platform is None:
            problems.append(
                f"{where}.identifier {identifier!r} is not the release URL of a bundle "
                f"of version {info['version']} (e.g. {bundle_url(info, PLATFORMS[0])!r})"
            )
        else:
            seen[platform] = seen.get(platform, 0) + 1
        digest = package.get("fileSha256")
        if not isinstance(digest, str) or not SHA256.match(digest):
            problems.append(f"{where}.fileSha256 {digest!r} is not 64 lowercase hex digits")
            continue
        states.add("unreleased" if digest == UNRELEASED else "released")
        if hashes is not None and platform is not None and digest != hashes[platform]:
            problems.append(
                f"{where}.fileSha256 is {digest}, but {bundle_name(info['version'], platform)} "
                f"hashes to {hashes[platform]}"
            )
    for platform in PLATFORMS:
        if seen.get(platform, 0) != 1:
            problems.append(f"{seen.get(platform, 0)} packages for {platform}, expected exactly 1")
    if len(states) > 1:
        problems.append(
            "some fileSha256 are the not-yet-released marker (64 zeros) and some are real: "
            "run `server_json.py update --bundles DIR` with every platform's bundle"
        )
    state = states.pop() if len(states) == 1 else "unreleased"
    if released and state == "unreleased":
        problems.append("fileSha256 values are the not-yet-released marker (64 zeros)")
    if problems:
        raise Invalid("server.json:\n  " + "\n  ".join(problems))
    return state


def updated(document: dict, info: dict, hashes: dict[str, str]) -> dict:
    """DOCUMENT with the version, name, URLs and hashes of this release."""
    result = dict(document)
    result["$schema"] = SCHEMA
    result["name"] = f"io.github.{info['owner']}/{info['repo']}"
    result["version"] = info["version"]
    result["repository"] = {"url": info["repository"], "source": "github"}
    result["packages"] = [
        {
            "registryType": "mcpb",
            "identifier": bundle_url(info, platform),
            "version": info["version"],
            "fileSha256": hashes[platform],
            "transport": {"type": "stdio"},
        }
        for platform in PLATFORMS
    ]
    return result


def dump(document: dict) -> str:
    return json.dumps(document, indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    check_parser = commands.add_parser("check", help="check server.json offline")
    check_parser.add_argument("--file", type=Path, default=ROOT / "server.json")
    check_parser.add_argument("--released", action="store_true", help="refuse the not-yet-released marker")
    check_parser.add_argument("--bundles", type=Path, help="compare every fileSha256 with the bundles in this folder")
    update_parser = commands.add_parser("update", help="write the hashes of a folder of built bundles")
    update_parser.add_argument("--file", type=Path, default=ROOT / "server.json")
    update_parser.add_argument("--bundles", type=Path, required=True)
    update_parser.add_argument("--output", type=Path, help="write here instead of over --file")
    reset_parser = commands.add_parser("reset", help="the not-yet-released form, for Cargo.toml's version and owner")
    reset_parser.add_argument("--file", type=Path, default=ROOT / "server.json")
    args = parser.parse_args(argv)

    try:
        info = project()
        try:
            document = json.loads(args.file.read_text())
        except (OSError, json.JSONDecodeError) as error:
            raise Invalid(f"{args.file}: {error}") from None
        hashes = bundle_hashes(args.bundles, info["version"]) if getattr(args, "bundles", None) else None
        if args.command == "reset":
            document = updated(document, info, {p: UNRELEASED for p in PLATFORMS})
            check(document, info)
            args.file.write_text(dump(document))
            print(f"{args.file}: toolcell {info['version']}, not yet released (fileSha256 values are the marker)")
        elif args.command == "check":
            state = check(document, info, released=args.released, hashes=hashes)
            detail = "every fileSha256 matches its bundle" if hashes else (
                "fileSha256 values are the not-yet-released marker" if state == "unreleased" else "real fileSha256 values"
            )
            print(f"{args.file}: valid for toolcell {info['version']}, {len(PLATFORMS)} bundles, {detail}")
        else:
            assert hashes is not None
            document = updated(document, info, hashes)
            check(document, info, released=True, hashes=hashes)
            output = args.output or args.file
            output.write_text(dump(document))
            print(f"{output}: {len(hashes)} bundles of toolcell {info['version']}")
            for platform, digest in hashes.items():
                print(f"  {digest}  {bundle_name(info['version'], platform)}")
    except Invalid as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
