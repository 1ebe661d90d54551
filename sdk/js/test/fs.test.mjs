// Unit tests of `fs.resolve`, `fs.display` and the paths in `fs` messages,
// on plain Node (20.6 or later), no dependencies:
//
//     node --test sdk/js/test/fs.test.mjs
//
// `toolcell.js` imports the component's WIT interfaces; the loader hooks
// below replace them with fakes. The fake preopens list the names in
// `globalThis.fakeMounts`; each fake directory answers every request with the
// WASI error `no-entry` and records the path it was asked for.

import assert from "node:assert/strict";
import { register } from "node:module";
import { beforeEach, test } from "node:test";

const FAKES = {
  "wasi:filesystem/preopens@": `
    const refuse = (name) => (_flags, rel) => {
      globalThis.fakeCalls.push([name, rel]);
      throw { payload: "no-entry" };
    };
    export const getDirectories = () =>
      globalThis.fakeMounts.map((name) => [{ openAt: refuse(name), statAt: refuse(name) }, name]);`,
  "toolcell:plugin/host@": `
    export const log = () => {};
    export const reportProgress = () => {};
    export const isCancelled = () => false;
    export const getConfig = () => undefined;
    export const configEntries = () => [];`,
};

const HOOKS = `
  const FAKES = ${JSON.stringify(FAKES)};
  export async function resolve(specifier, context, next) {
    for (const [prefix, source] of Object.entries(FAKES)) {
      if (specifier.startsWith(prefix)) {
        return { url: "data:text/javascript," + encodeURIComponent(source), shortCircuit: true };
      }
    }
    return next(specifier, context);
  }
  export async function load(url, context, next) {
    // No package.json says the SDK is a module; it is.
    if (url.endsWith("/toolcell.js")) return next(url, { ...context, format: "module" });
    return next(url, context);
  }`;

register(`data:text/javascript,${encodeURIComponent(HOOKS)}`);
const { fs, ToolError } = await import("../toolcell.js");

beforeEach(() => {
  globalThis.fakeMounts = [];
  globalThis.fakeCalls = [];
});

function mount(...names) {
  globalThis.fakeMounts = names;
}

function resolves(cases) {
  for (const [path, expected] of cases) assert.equal(fs.resolve(path), expected, path);
}

/** The message of the `ToolError` that `f` throws. */
function failure(f) {
  try {
    f();
  } catch (error) {
    assert.ok(error instanceof ToolError, String(error));
    return error.message;
  }
  assert.fail("no error");
}

test("without mounts", () => {
  assert.deepEqual(fs.mounts(), []);
  assert.equal(fs.resolve("/abs/path"), "/abs/path");
  assert.match(failure(() => fs.resolve("relative")), /no mounted directory/);
  assert.match(failure(() => fs.resolve("")), /empty/);
  assert.equal(fs.display("/C:/x"), "/C:/x");
});

test("a POSIX host keeps paths as they are", () => {
  mount("/home/me/proj", "/data");
  resolves([
    ["/data/x", "/data/x"],
    ["/Data/x", "/Data/x"],
    ["/elsewhere", "/elsewhere"],
    ["a/b.txt", "/home/me/proj/a/b.txt"],
    ["C:\\x", "/home/me/proj/C:\\x"],
    ["C:x", "/home/me/proj/C:x"],
  ]);
  assert.equal(fs.display("/home/me/proj/a"), "/home/me/proj/a");
  assert.equal(fs.display("/C:/a"), "/C:/a");
});

test("Windows paths take the sandbox's form", () => {
  mount("/C:/Users/me/proj", "/D:/data");
  resolves([
    ["C:\\Users\\me\\proj\\a.txt", "/C:/Users/me/proj/a.txt"],
    ["C:/Users/me/proj/a.txt", "/C:/Users/me/proj/a.txt"],
    ["/C:/Users/me/proj/a.txt", "/C:/Users/me/proj/a.txt"],
    ["\\\\?\\D:\\data\\x", "/D:/data/x"],
    ["D:\\data", "/D:/data"],
    ["D:/data/", "/D:/data"],
    ["C:", "/C:"],
    ["C:\\", "/C:/"],
    ["E:\\other\\x", "/E:/other/x"],
  ]);
});

test("Windows mounts match ignoring case and keep their spelling", () => {
  mount("/C:/Users/me/proj", "/D:/data");
  resolves([
    ["c:\\users\\ME\\Proj\\Src\\a.txt", "/C:/Users/me/proj/Src/a.txt"],
    ["/c:/USERS/me/proj", "/C:/Users/me/proj"],
    ["d:/DATA//x/./y", "/D:/data/x/./y"],
  ]);
});

test("Windows mounts match whole components", () => {
  mount("/C:/data");
  resolves([
    ["c:\\data-evil\\x", "/c:/data-evil/x"],
    ["c:\\DATA\\x", "/C:/data/x"],
    ["c:\\", "/c:/"],
  ]);
});

test("the longest matching mount wins", () => {
  mount("/C:/proj", "/C:/proj/Vendor/lib");
  resolves([
    ["c:\\proj\\vendor\\lib\\x", "/C:/proj/Vendor/lib/x"],
    ["c:\\proj\\vendor\\other", "/C:/proj/vendor/other"],
    ["c:\\proj\\x", "/C:/proj/x"],
  ]);
  mount("/C:/proj/Vendor/lib", "/C:/proj");
  resolves([["c:\\proj\\vendor\\lib\\x", "/C:/proj/Vendor/lib/x"]]);
  mount("/C:/Proj", "/c:/PROJ"); // equals: the last wins, as in wasi-libc
  resolves([["C:\\proj\\x", "/c:/PROJ/x"]]);
});

test("Windows relative paths join the first mount", () => {
  mount("/C:/Users/me/proj", "/D:/data");
  resolves([
    ["src\\a.txt", "/C:/Users/me/proj/src/a.txt"],
    ["src/a.txt", "/C:/Users/me/proj/src/a.txt"],
  ]);
  mount("/C:");
  resolves([["a.txt", "/C:/a.txt"]]);
});

test("Windows drive-relative paths are refused", () => {
  mount("/C:/proj");
  for (const path of ["C:foo", "c:foo\\bar", "\\\\?\\C:foo"]) {
    const message = failure(() => fs.resolve(path));
    assert.match(message, /drive-relative paths are not supported/);
    assert.match(message, /full path/);
    assert.match(message, /relative to the first mounted folder/);
  }
});

test("Windows device and UNC paths are left to the sandbox", () => {
  mount("/C:/proj");
  resolves([
    ["\\\\.\\C:\\proj\\x", "//./C:/proj/x"],
    ["\\\\server\\share\\x", "//server/share/x"],
    ["\\proj\\x", "/proj/x"],
  ]);
});

test("display shows Windows paths", () => {
  mount("/C:/Users/me/proj");
  assert.equal(fs.display("/C:/Users/me/a.txt"), "C:\\Users\\me\\a.txt");
  assert.equal(fs.display("/C:"), "C:");
  assert.equal(fs.display("/d:/x"), "d:\\x");
  assert.equal(fs.display("/CD:/x"), "/CD:/x");
  assert.equal(fs.display("/tmp/x"), "/tmp/x");
  assert.equal(fs.display("a/b"), "a/b");
  for (const path of ["C:\\Users\\me\\proj\\a.txt", "C:\\Users\\me\\proj", "C:\\Users\\x"]) {
    assert.equal(fs.display(fs.resolve(path)), path);
  }
  for (const path of ["/C:/Users/me/proj/a.txt", "/C:/Users/me/proj", "/C:"]) {
    assert.equal(fs.resolve(fs.display(path)), path);
  }
});

test("file functions on a Windows host reach the mount and show Windows paths", () => {
  mount("/C:/Users/me/proj", "/D:/data");
  assert.equal(
    failure(() => fs.readText("c:\\users\\ME\\proj\\a.txt")),
    "cannot access `C:\\Users\\me\\proj\\a.txt`: no such file or directory",
  );
  assert.equal(failure(() => fs.stat("D:\\DATA")), "cannot access `D:\\data`: no such file or directory");
  assert.deepEqual(globalThis.fakeCalls, [
    ["/C:/Users/me/proj", "a.txt"],
    ["/D:/data", "."],
  ]);
  assert.equal(fs.exists("C:\\Users\\me\\proj\\a.txt"), false);
  assert.equal(
    failure(() => fs.readText("E:\\secret")),
    "`E:\\secret` is outside the directories this tool may access (granted: C:\\Users\\me\\proj, D:\\data)",
  );
  assert.equal(
    failure(() => fs.readText("C:\\Users\\me\\proj-evil\\x")),
    "`C:\\Users\\me\\proj-evil\\x` is outside the directories this tool may access " +
      "(granted: C:\\Users\\me\\proj, D:\\data)",
  );
});

test("file functions on a POSIX host", () => {
  mount("/home/me/proj");
  assert.equal(
    failure(() => fs.readText("/etc/passwd")),
    "`/etc/passwd` is outside the directories this tool may access (granted: /home/me/proj)",
  );
  assert.equal(failure(() => fs.readText("a")), "cannot access `/home/me/proj/a`: no such file or directory");
  assert.deepEqual(globalThis.fakeCalls, [["/home/me/proj", "a"]]);
});
