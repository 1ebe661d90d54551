// Records what CPython 3.14 prints for every snippet of this corpus, where it differs from
// CPython 3.11's recording (record.py).
//
// RustPython 0.5 follows CPython 3.14's standard library, and a few outputs changed between
// 3.11 and 3.14 (`calendar.monthrange` returns a `calendar.Day` member since 3.12, for one). The
// CPython 3.14 here is Pyodide's: CPython compiled to WebAssembly, run by Node, with `data/`
// mounted as the working directory and first on `sys.path`, as `python -c` has it. Being
// WebAssembly, its OS errors carry WASI's numbers (`[Errno 44]` for ENOENT), as run_python's do.
//
// Run it with Node and the npm package (nothing in the repository needs either):
//
//     npm install --prefix /tmp/pyodide pyodide@314.0.7
//     node tests/execute/python/record_314.mjs /tmp/pyodide/node_modules/pyodide
//
// It writes `NN_name.3.14.out` (stdout) for each snippet whose stdout differs from its
// `NN_name.out`, and removes a `.3.14.out` that no longer differs. The test
// (tests/all/execute_python.rs) accepts either recording.

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const pyodideDir = process.argv[2];
if (!pyodideDir) {
  console.error("usage: node record_314.mjs <path to node_modules/pyodide>");
  process.exit(2);
}
const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
const here = path.dirname(fileURLToPath(import.meta.url));
const snippets = fs
  .readdirSync(here)
  .filter((name) => /^\d\d_.*\.py$/.test(name))
  .sort();

for (const name of snippets) {
  const stem = name.slice(0, -".py".length);
  const read = (suffix) => {
    const file = path.join(here, stem + suffix);
    return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null;
  };
  let stdout = "";
  // A fresh interpreter per snippet, as `python -c` is.
  const python = await loadPyodide({
    stdout: (line) => {
      stdout += line + "\n";
    },
    stderr: () => {},
  });
  python.FS.mkdirTree("/work/data");
  python.FS.mount(python.FS.filesystems.NODEFS, { root: path.join(here, "data") }, "/work/data");
  python.FS.chdir("/work/data");
  let stdin = read(".stdin") ?? "";
  python.setStdin({
    stdin: () => {
      const text = stdin;
      stdin = null;
      return text;
    },
  });
  python.runPython("import sys; sys.path.insert(0, '')");
  let outcome = "exit 0";
  try {
    python.runPython(read(".py"));
  } catch (error) {
    outcome = `failed: ${String(error).trim().split("\n").pop()}`;
  }
  const recorded = path.join(here, stem + ".3.14.out");
  if (stdout !== read(".out")) {
    fs.writeFileSync(recorded, stdout);
    console.log(`${name}: ${outcome}; stdout differs from 3.11's, written to ${stem}.3.14.out`);
  } else if (fs.existsSync(recorded)) {
    fs.unlinkSync(recorded);
  }
}
