"""Tests of server.json and of tests/release/server_json.py, offline.

Run: python3 -m unittest discover -s tests/release
"""

from __future__ import annotations

import copy
import io
import json
import sys
import tempfile
import tomllib
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import server_json as sj  # noqa: E402


def committed() -> dict:
    return json.loads((sj.ROOT / "server.json").read_text())


def run(*argv: str) -> tuple[int, str]:
    """Runs the script's main; returns its exit code and what it printed."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = sj.main(list(argv))
    return code, out.getvalue() + err.getvalue()


class CommittedFile(unittest.TestCase):
    def test_the_committed_server_json_is_valid(self):
        self.assertIn(sj.check(committed(), sj.project()), ("released", "unreleased"))

    def test_it_lists_one_mcpb_bundle_per_release_target(self):
        identifiers = [p["identifier"] for p in committed()["packages"]]
        self.assertEqual(len(identifiers), 5)
        for platform in ("linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64"):
            self.assertEqual(sum(i.endswith(f"-{platform}.mcpb") for i in identifiers), 1, platform)

    def test_the_release_targets_are_those_of_dist_workspace_toml(self):
        config = tomllib.loads((sj.ROOT / "dist-workspace.toml").read_text())["dist"]
        self.assertEqual(sorted(config["targets"]), sorted(sj.TARGETS))
        self.assertEqual(config["packages"], ["toolcell"])

    def test_the_release_workflow_runs_the_bundle_job(self):
        config = tomllib.loads((sj.ROOT / "dist-workspace.toml").read_text())["dist"]
        workflows = sj.ROOT / ".github" / "workflows"
        release = (workflows / "release.yml").read_text()
        for job in config["global-artifacts-jobs"] + config.get("post-announce-jobs", []):
            name = job.removeprefix("./")
            self.assertTrue((workflows / f"{name}.yml").is_file(), name)
            self.assertIn(f"custom-{name}:", release, f"release.yml is stale: run `dist generate` ({name})")
        self.assertIn("server_json.py update", (workflows / "mcpb-bundles.yml").read_text())
        # The same dist generated it (CI does not install dist: `dist plan`
        # is the full check), and it holds the build setup steps.
        self.assertIn(f"/cargo-dist/releases/download/v{config['cargo-dist-version']}/", release)
        setup = (workflows / config["github-build-setup"]).resolve().read_text()
        for name in (line.split(":", 1)[1].strip() for line in setup.splitlines() if line.startswith("- name:")):
            self.assertIn(name, release, "release.yml lacks a build-setup step: run `dist generate`")


class Check(unittest.TestCase):
    def setUp(self):
        self.info = sj.project()
        self.doc = sj.updated(committed(), self.info, {p: sj.UNRELEASED for p in sj.PLATFORMS})

    def refused(self, document: dict, words: str, **kwargs) -> None:
        with self.assertRaises(sj.Invalid) as caught:
            sj.check(document, self.info, **kwargs)
        self.assertIn(words, str(caught.exception))

    def test_the_not_yet_released_marker_is_accepted_and_named(self):
        self.assertEqual(sj.check(self.doc, self.info), "unreleased")
        self.refused(self.doc, "not-yet-released marker", released=True)

    def test_real_hashes_are_released(self):
        doc = sj.updated(self.doc, self.info, {p: f"{i:x}" * 64 for i, p in enumerate(sj.PLATFORMS, 1)})
        self.assertEqual(sj.check(doc, self.info, released=True), "released")

    def test_a_mix_of_marker_and_real_hashes_is_refused(self):
        self.doc["packages"][2]["fileSha256"] = "ab" * 32
        self.refused(self.doc, "some fileSha256 are the not-yet-released marker")

    def test_a_hash_that_is_not_64_lowercase_hex_is_refused(self):
        for bad in ("AB" * 32, "ab" * 31, "sha256:" + "ab" * 32, 42):
            doc = copy.deepcopy(self.doc)
            doc["packages"][0]["fileSha256"] = bad
            self.refused(doc, "packages[0].fileSha256")

    def test_a_url_of_another_version_is_refused(self):
        url = self.doc["packages"][1]["identifier"]
        self.doc["packages"][1]["identifier"] = url.replace(self.info["version"], "9.9.9")
        self.refused(self.doc, "packages[1].identifier")
        self.refused(self.doc, "0 packages for linux-arm64")

    def test_a_version_other_than_the_crates_is_refused(self):
        self.doc["version"] = "9.9.9"
        self.refused(self.doc, "version is '9.9.9'")

    def test_a_missing_required_field_is_refused(self):
        for key in ("$schema", "name", "description", "version", "packages"):
            doc = copy.deepcopy(self.doc)
            del doc[key]
            self.refused(doc, f"required field {key!r} is missing")

    def test_a_duplicate_or_missing_platform_is_refused(self):
        self.doc["packages"].append(copy.deepcopy(self.doc["packages"][0]))
        self.refused(self.doc, "2 packages for linux-x64")
        del self.doc["packages"][4]
        self.refused(self.doc, "0 packages for win32-x64")

    def test_another_registry_type_or_transport_is_refused(self):
        self.doc["packages"][0]["registryType"] = "npm"
        self.doc["packages"][3]["transport"] = {"type": "sse", "url": "https://example.com"}
        self.refused(self.doc, "packages[0].registryType")
        self.refused(self.doc, "packages[3].transport")

    def test_the_name_follows_the_repository_owner(self):
        self.doc["name"] = "io.github.someone-else/toolcell"
        self.refused(self.doc, f"expected 'io.github.{self.info['owner']}/toolcell'")

    def test_a_long_description_is_refused(self):
        self.doc["description"] = "x" * 101
        self.refused(self.doc, "description must be 1 to 100 characters")


class Update(unittest.TestCase):
    def setUp(self):
        self.info = sj.project()
        self.tmp = tempfile.TemporaryDirectory()
        self.folder = Path(self.tmp.name)
        self.bundles = self.folder / "bundles"
        self.bundles.mkdir()
        # Stand-ins for bundles: the script hashes bytes, whatever they are.
        for platform in sj.PLATFORMS:
            (self.bundles / sj.bundle_name(self.info["version"], platform)).write_bytes(f"bundle {platform}".encode())
        self.file = self.folder / "server.json"
        self.file.write_text(sj.dump(committed()))

    def tearDown(self):
        self.tmp.cleanup()

    def test_update_writes_each_bundles_sha256_and_check_then_agrees(self):
        code, output = run("update", "--file", str(self.file), "--bundles", str(self.bundles))
        self.assertEqual(code, 0, output)
        doc = json.loads(self.file.read_text())
        expected = {p: sj.sha256(self.bundles / sj.bundle_name(self.info["version"], p)) for p in sj.PLATFORMS}
        got = {}
        for package in doc["packages"]:
            name = package["identifier"].rsplit("/", 1)[1]
            platform = name.removeprefix(f"toolcell-{self.info['version']}-").removesuffix(".mcpb")
            got[platform] = package["fileSha256"]
        self.assertEqual(got, expected)
        self.assertEqual(len(set(got.values())), 5)
        self.assertEqual(doc["title"], committed()["title"])
        code, output = run("check", "--released", "--file", str(self.file), "--bundles", str(self.bundles))
        self.assertEqual(code, 0, output)
        self.assertIn("every fileSha256 matches its bundle", output)

    def test_check_notices_a_bundle_that_changed_after_the_update(self):
        self.assertEqual(run("update", "--file", str(self.file), "--bundles", str(self.bundles))[0], 0)
        (self.bundles / sj.bundle_name(self.info["version"], "darwin-arm64")).write_bytes(b"rebuilt")
        code, output = run("check", "--file", str(self.file), "--bundles", str(self.bundles))
        self.assertEqual(code, 1)
        self.assertIn(f"toolcell-{self.info['version']}-darwin-arm64.mcpb hashes to", output)

    def test_update_refuses_a_folder_missing_a_platform_and_names_it(self):
        (self.bundles / sj.bundle_name(self.info["version"], "win32-x64")).unlink()
        before = self.file.read_text()
        code, output = run("update", "--file", str(self.file), "--bundles", str(self.bundles))
        self.assertEqual(code, 1)
        self.assertIn(f"missing toolcell-{self.info['version']}-win32-x64.mcpb", output)
        self.assertEqual(self.file.read_text(), before)

    def test_reset_goes_back_to_the_marker_for_the_current_version(self):
        self.assertEqual(run("update", "--file", str(self.file), "--bundles", str(self.bundles))[0], 0)
        stale = json.loads(self.file.read_text())
        stale["version"] = "0.0.1"
        self.file.write_text(sj.dump(stale))
        code, output = run("reset", "--file", str(self.file))
        self.assertEqual(code, 0, output)
        doc = json.loads(self.file.read_text())
        self.assertEqual(sj.check(doc, self.info), "unreleased")
        self.assertEqual({p["fileSha256"] for p in doc["packages"]}, {sj.UNRELEASED})
        self.assertEqual(doc["version"], self.info["version"])

    def test_update_can_write_elsewhere_and_leave_the_file(self):
        before = self.file.read_text()
        out = self.folder / "out.json"
        code, output = run("update", "--file", str(self.file), "--bundles", str(self.bundles), "--output", str(out))
        self.assertEqual(code, 0, output)
        self.assertEqual(self.file.read_text(), before)
        self.assertEqual(sj.check(json.loads(out.read_text()), self.info, released=True), "released")


if __name__ == "__main__":
    unittest.main()
