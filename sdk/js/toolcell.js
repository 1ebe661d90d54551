/**
 * Write Toolcell plugins in JavaScript.
 *
 * A plugin is a WebAssembly component that offers MCP tools. Toolcell runs
 * each call in a fresh sandbox that can reach only what `plugins.toml`
 * grants: mounted directories, named environment variables and outbound
 * hosts. This module hides the WIT bindings: a plugin imports `toolcell`
 * alone, and `toolcell build` bundles the two and builds the component.
 *
 * The main exports:
 * - `Plugin` collects tools; `plugin.tool(spec, handler)` adds one and
 *   `plugin.exports()` is what the module exports as `tools`.
 * - `schema` builds the JSON Schemas of arguments and results; a plain
 *   JSON Schema object works as well.
 * - `Output` is what a handler returns on success, with `Content` blocks;
 *   `ToolError` is a failure the model can act on, sent as a result with
 *   `isError: true`. Any other exception becomes such a result too, never a
 *   trap.
 * - `fs` reads and writes files under the plugin's mounts: a relative path is
 *   resolved against the first mount (the guest has no current directory),
 *   and on a Windows host `C:\x` means the sandbox's `/C:/x`.
 * - `host` logs, reports progress, checks for cancellation and reads the
 *   plugin's `config` table.
 *
 * @example
 * import { Plugin, Output, schema, fs } from "toolcell";
 *
 * const plugin = new Plugin();
 * plugin.tool({
 *   name: "count_lines",
 *   title: "Count lines",
 *   description: "Count the lines of a text file.",
 *   category: "read",
 *   readOnly: true,
 *   input: schema.object({
 *     path: schema.string("The file, absolute or relative to the first mount."),
 *   }),
 * }, ({ path }) => Output.text(`${fs.readText(path).split("\n").length} lines`));
 *
 * export const tools = plugin.exports();
 *
 * The module's top level runs once, when the component is built (the
 * componentizer snapshots the initialised engine), not at each call: register
 * tools there, but call `host` and `fs` only inside handlers.
 */

import * as witHost from "toolcell:plugin/host@0.1.0";
import { getDirectories } from "wasi:filesystem/preopens@0.2.12";

/**
 * A failure the model can act on: the call's result has `isError: true` and
 * this message. Say what to do differently ("`x` is not a directory; pass
 * the file itself").
 */
export class ToolError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "ToolError";
  }
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const OTHER_CATEGORY = /^[a-z0-9-]+$/;
const CATEGORIES = ["read", "search", "write", "execute", "vcs", "network"];
const LOG_LEVELS = ["trace", "debug", "info", "warning", "error"];
const OPTIONAL = Symbol("toolcell.optional");

/**
 * Builders of portable JSON Schemas (what every MCP client accepts).
 *
 * `schema.object` makes every property required unless it is wrapped in
 * `schema.optional`, and refuses properties it does not list. An optional
 * argument is left out by the client, never sent as `null`.
 */
export const schema = {
  /**
   * An object with these properties.
   * @param {Record<string, object>} properties
   * @param {string} [description]
   */
  object(properties = {}, description) {
    const props = {};
    const required = [];
    for (const [key, value] of Object.entries(properties)) {
      props[key] = value;
      if (!value[OPTIONAL]) required.push(key);
    }
    return withDescription({ type: "object", properties: props, required, additionalProperties: false }, description);
  },
  /** A string. @param {string} [description] @param {object} [extra] such as `{ minLength: 1 }` */
  string(description, extra) {
    return withDescription({ type: "string", ...extra }, description);
  },
  /** An integer. @param {string} [description] @param {object} [extra] such as `{ minimum: 0 }` */
  integer(description, extra) {
    return withDescription({ type: "integer", ...extra }, description);
  },
  /** A number. @param {string} [description] @param {object} [extra] */
  number(description, extra) {
    return withDescription({ type: "number", ...extra }, description);
  },
  /** A boolean. @param {string} [description] */
  boolean(description) {
    return withDescription({ type: "boolean" }, description);
  },
  /** An array of `items`. @param {object} items @param {string} [description] @param {object} [extra] */
  array(items, description, extra) {
    return withDescription({ type: "array", items, ...extra }, description);
  },
  /** One of these strings. @param {string[]} values @param {string} [description] */
  enum(values, description) {
    return withDescription({ type: "string", enum: [...values] }, description);
  },
  /** The same schema, as a property `schema.object` does not require. @param {object} inner */
  optional(inner) {
    const copy = { ...inner };
    Object.defineProperty(copy, OPTIONAL, { value: true });
    return copy;
  },
};

function withDescription(value, description) {
  if (description !== undefined) value.description = description;
  return value;
}

/**
 * Blocks of a result besides text. Each returns an opaque block for
 * `Output.with`; binary `data` is a `Uint8Array` (or an `ArrayBuffer`, or an
 * array of bytes).
 */
export const Content = {
  /** Text for the model. @param {string} text */
  text(text) {
    return { tag: "text", val: String(text) };
  },
  /** An image. @param {Uint8Array} data @param {string} mimeType such as `image/png` */
  image(data, mimeType) {
    return { tag: "image", val: { data: bytes(data), mimeType } };
  },
  /** A sound. @param {Uint8Array} data @param {string} mimeType such as `audio/wav` */
  audio(data, mimeType) {
    return { tag: "audio", val: { data: bytes(data), mimeType } };
  },
  /**
   * A link to a resource the client may fetch.
   * @param {{uri: string, name: string, title?: string, description?: string, mimeType?: string, size?: number}} link
   */
  resourceLink({ uri, name, title, description, mimeType, size }) {
    return {
      tag: "resource-link",
      val: { uri, name, title, description, mimeType, size: size === undefined ? undefined : BigInt(size) },
    };
  },
  /** A resource with its text. @param {string} uri @param {string} text @param {string} [mimeType] */
  embeddedText(uri, text, mimeType) {
    return { tag: "embedded-resource", val: { uri, mimeType, body: { tag: "text", val: String(text) } } };
  },
  /** A resource with its bytes. @param {string} uri @param {Uint8Array} data @param {string} [mimeType] */
  embeddedBlob(uri, data, mimeType) {
    return { tag: "embedded-resource", val: { uri, mimeType, body: { tag: "blob", val: bytes(data) } } };
  },
};

function bytes(data) {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer || Array.isArray(data)) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw new TypeError("binary content must be a Uint8Array, an ArrayBuffer or an array of bytes");
}

/**
 * A successful result: content blocks and optional structured content.
 *
 * A handler may also return a string (one text block) or a plain object
 * (structured content, shown as JSON text).
 */
export class Output {
  /** @param {object[]} [content] blocks made by `Content` @param {*} [structured] */
  constructor(content = [], structured = undefined) {
    this.content = content;
    this.structured = structured;
  }

  /** A result of one text block. @param {string} text */
  static text(text) {
    return new Output([Content.text(text)]);
  }

  /**
   * A result with structured content `value` (an object that should match
   * the tool's `output` schema) and `text`, a readable rendering of it for
   * clients that show only text (default: the value as indented JSON).
   * @param {object} value
   * @param {string} [text]
   */
  static structured(value, text) {
    return new Output([Content.text(text ?? JSON.stringify(value, null, 2))], value);
  }

  /** Appends a content block; returns this output. @param {object} block */
  with(block) {
    this.content.push(block);
    return this;
  }
}

/**
 * The tools of one plugin.
 */
export class Plugin {
  #tools = new Map();

  /**
   * Adds a tool; returns the plugin. Mistakes in `spec` throw here, which
   * fails the build with the message.
   *
   * `spec` fields and their defaults:
   * - `name` (required): what the model calls, `[a-zA-Z0-9_-]{1,64}`.
   * - `title`: a short name for people; default `name`.
   * - `description`: what the tool does and when to use it, for the model;
   *   default empty.
   * - `category`: `read`, `search`, `write`, `execute`, `vcs`, `network` or
   *   another name (lowercase letters, digits, `-`); default `read`.
   * - `input`: the JSON Schema of the arguments, an object schema; default:
   *   no arguments. The host validates arguments against it before the call.
   * - `output`: the JSON Schema of structured results, if the tool returns
   *   them (see `Output.structured`).
   * - The four annotations, MCP's cautious defaults unless given:
   *   `readOnly` false, `destructive` true, `idempotent` false, `openWorld`
   *   true. `readOnly: true` makes the defaults of `destructive` false and of
   *   `idempotent` true; the host then mounts every directory read-only for
   *   the tool.
   *
   * `handler(args)` gets the arguments as an object and returns an `Output`,
   * a string or a plain object, or a promise of one; a thrown `ToolError`
   * (or any other exception) becomes a result with `isError: true`.
   *
   * @param {object} spec
   * @param {(args: object) => Output | string | object | Promise<Output | string | object>} handler
   */
  tool(spec, handler) {
    const { name } = spec ?? {};
    if (typeof name !== "string" || !TOOL_NAME.test(name)) {
      throw new TypeError(`tool name ${JSON.stringify(name)} must match [a-zA-Z0-9_-]{1,64}`);
    }
    if (this.#tools.has(name)) throw new TypeError(`tool \`${name}\` is defined twice`);
    if (typeof handler !== "function") throw new TypeError(`tool \`${name}\` needs a handler function`);
    const input = spec.input ?? schema.object({});
    if (input === null || typeof input !== "object" || input.type !== "object") {
      throw new TypeError(`the input schema of \`${name}\` must be an object schema ({ type: "object", ... })`);
    }
    if (spec.output !== undefined && (spec.output === null || typeof spec.output !== "object")) {
      throw new TypeError(`the output schema of \`${name}\` must be a JSON Schema object`);
    }
    const readOnly = flag(spec, "readOnly", false);
    this.#tools.set(name, {
      descriptor: {
        name,
        title: stringField(spec, "title", name),
        description: stringField(spec, "description", ""),
        inputSchema: JSON.stringify(input),
        outputSchema: spec.output === undefined ? undefined : JSON.stringify(spec.output),
        category: category(name, spec.category ?? "read"),
        annotations: {
          readOnly,
          destructive: flag(spec, "destructive", !readOnly),
          idempotent: flag(spec, "idempotent", readOnly),
          openWorld: flag(spec, "openWorld", true),
        },
      },
      handler,
    });
    return this;
  }

  /**
   * The `tools` interface of the component: export it as `tools`
   * (`export const tools = plugin.exports();`).
   */
  exports() {
    const tools = this.#tools;
    return {
      listTools() {
        return [...tools.values()].map((tool) => tool.descriptor);
      },
      async callTool(call) {
        try {
          const tool = tools.get(call.tool);
          if (!tool) throw new ToolError(`this plugin has no tool \`${call.tool}\``);
          let args;
          try {
            args = JSON.parse(call.arguments);
          } catch (error) {
            throw new ToolError(`invalid arguments: ${error.message}`);
          }
          return success(call.tool, await tool.handler(args));
        } catch (error) {
          return failure(call.tool, error);
        }
      },
    };
  }
}

function stringField(spec, key, fallback) {
  const value = spec[key];
  if (value === undefined) return fallback;
  if (typeof value !== "string") throw new TypeError(`\`${key}\` of \`${spec.name}\` must be a string`);
  return value;
}

function flag(spec, key, fallback) {
  const value = spec[key];
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") throw new TypeError(`\`${key}\` of \`${spec.name}\` must be true or false`);
  return value;
}

function category(tool, name) {
  if (CATEGORIES.includes(name)) return { tag: name };
  if (typeof name === "string" && OTHER_CATEGORY.test(name)) return { tag: "other", val: name };
  throw new TypeError(
    `the category of \`${tool}\` must be one of ${CATEGORIES.join(", ")} or a name of lowercase letters, digits and -`,
  );
}

function success(tool, value) {
  let output = value;
  if (typeof value === "string") {
    output = Output.text(value);
  } else if (value !== null && typeof value === "object" && !(value instanceof Output) && !Array.isArray(value)) {
    output = Output.structured(value);
  }
  if (!(output instanceof Output)) {
    throw new TypeError(`the handler of \`${tool}\` returned ${describe(value)}; return an Output, a string or an object`);
  }
  let structuredContent;
  if (output.structured !== undefined) {
    structuredContent = JSON.stringify(output.structured);
    if (structuredContent === undefined) throw new TypeError("the structured content is not JSON");
  }
  return { content: output.content, structuredContent, isError: false };
}

function failure(tool, error) {
  let message;
  try {
    if (error instanceof ToolError) {
      message = error.message;
    } else {
      message = `\`${tool}\` failed: ${error instanceof Error ? `${error.name}: ${error.message}` : describe(error)}`;
      witHost.log("error", `${message}\n${error?.stack ?? ""}`);
    }
  } catch {
    message = `\`${tool}\` failed with an exception that cannot be shown`;
  }
  return { content: [{ tag: "text", val: message }], structuredContent: undefined, isError: true };
}

function describe(value) {
  try {
    return typeof value === "string" ? JSON.stringify(value) : String(value);
  } catch {
    return typeof value;
  }
}

/**
 * Host services: logging, progress, cancellation and configuration.
 */
export const host = {
  /**
   * Writes a line to the host's log, tagged with the plugin and tool.
   * (`console.log` and `console.error` also reach the log, at level info.)
   * @param {"trace" | "debug" | "info" | "warning" | "error"} level
   * @param {string} message
   */
  log(level, message) {
    const known = level === "warn" ? "warning" : level;
    if (!LOG_LEVELS.includes(known)) throw new TypeError(`log level must be one of ${LOG_LEVELS.join(", ")}`);
    witHost.log(known, String(message));
  },
  /**
   * Reports progress on the current call; `progress` should increase with
   * each report, and `total` is the value it will reach, if known.
   * @param {number} progress @param {number} [total] @param {string} [message]
   */
  progress(progress, total, message) {
    witHost.reportProgress(Number(progress), total === undefined ? undefined : Number(total), message);
  },
  /** Whether the client cancelled the current call; a long loop should check now and then. */
  isCancelled() {
    return witHost.isCancelled();
  },
  /** One value of the plugin's `config` table, or `undefined`. @param {string} key */
  config(key) {
    return witHost.getConfig(key) ?? undefined;
  },
  /** Every value of the plugin's `config` table, as `[key, value]` pairs sorted by key. */
  configEntries() {
    return witHost.configEntries();
  },
};

/**
 * Files under the plugin's mounts.
 *
 * Every mount appears in the sandbox under a name taken from its host path:
 * on Linux and macOS the path itself (`/home/me/proj`), on Windows a POSIX
 * form of it (`C:\Users\me\proj` is `/C:/Users/me/proj`). The guest has
 * no current directory: a relative path is resolved against the plugin's
 * first mount. Every function here takes Windows paths on a Windows host,
 * and messages show paths the way the host writes them (`fs.display`). The
 * sandbox itself refuses whatever leaves a mount (`..`, a symlink out, a
 * path outside every mount), and writes to a read-only mount; the functions
 * turn such refusals, and other failures, into a `ToolError` that names the
 * path.
 */
export const fs = {
  /**
   * The mounted directories, in `plugins.toml` order, as the sandbox names
   * them (`/C:/Users/me/proj` for a Windows folder). @returns {string[]}
   */
  mounts() {
    return getDirectories().map(([, path]) => path);
  },

  /**
   * The sandbox's name for `path`: itself when absolute, else joined to the
   * first mount. On a Windows host (a mount is named like `/C:/...`),
   * `C:\x\y`, `C:/x/y` and `\\?\C:\x\y` all mean `/C:/x/y`, and an
   * absolute path whose leading folders match a mount's, ignoring case, is
   * spelled as that mount is; a drive-relative path (`C:x`) is refused.
   * Containment is not checked here; the sandbox refuses what lies outside
   * the mounts when the path is used.
   * @param {string} path
   */
  resolve(path) {
    if (typeof path !== "string" || path === "") throw new ToolError("the path is empty");
    const granted = fs.mounts();
    if (isWindows(granted)) {
      path = posixForm(path);
      if (path.startsWith("/")) return respell(path, granted);
    } else if (path.startsWith("/")) {
      return path;
    }
    const first = granted[0];
    if (first === undefined) {
      throw new ToolError(`\`${path}\` is relative, but this tool has no mounted directory to resolve it against`);
    }
    return first.endsWith("/") ? first + path : `${first}/${path}`;
  },

  /**
   * `path` as the host writes it, for messages: on a Windows host
   * `/C:/Users/me/a.txt` is shown as `C:\Users\me\a.txt`; any other path,
   * and every path on other hosts, is returned unchanged.
   * @param {string} path
   */
  display(path) {
    path = String(path);
    return hasDrive(path) && isWindows(fs.mounts()) ? path.slice(1).replaceAll("/", "\\") : path;
  },

  /** The contents of a file. @param {string} path @returns {Uint8Array} */
  readBytes(path) {
    const { shown, dir, rel } = locate(path);
    return attempt(shown, () => {
      const file = dir.openAt({ symlinkFollow: true }, rel, {}, { read: true });
      if (file.getType() === "directory") throw new ToolError(`\`${shown}\` is a directory, not a file`);
      const chunks = [];
      let offset = 0n;
      let total = 0;
      for (;;) {
        const [chunk, end] = file.read(1n << 20n, offset);
        if (chunk.length > 0) chunks.push(chunk);
        total += chunk.length;
        offset += BigInt(chunk.length);
        if (end || chunk.length === 0) break;
      }
      if (chunks.length === 1) return chunks[0];
      const all = new Uint8Array(total);
      let at = 0;
      for (const chunk of chunks) {
        all.set(chunk, at);
        at += chunk.length;
      }
      return all;
    });
  },

  /** The contents of a UTF-8 text file. @param {string} path @returns {string} */
  readText(path) {
    const data = fs.readBytes(path);
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(data);
    } catch {
      throw new ToolError(`\`${fs.display(fs.resolve(path))}\` is not UTF-8 text`);
    }
  },

  /**
   * Replaces (or creates) a file whole: the data goes to a temporary file
   * beside it, `.<name>.toolcell-tmp-<hex>`, which is then renamed over the
   * target, so that no reader sees half of it.
   * @param {string} path @param {Uint8Array} data
   */
  writeBytes(path, data) {
    const { shown, dir, rel } = locate(path);
    const slash = rel.lastIndexOf("/");
    const name = rel.slice(slash + 1);
    if (name === "" || name === "." || name === "..") throw new ToolError(`\`${shown}\` is not a file path`);
    const random = [...crypto.getRandomValues(new Uint8Array(8))].map((b) => b.toString(16).padStart(2, "0")).join("");
    const temp = `${rel.slice(0, slash + 1)}.${name.slice(0, 200)}.toolcell-tmp-${random}`;
    const contents = bytes(data);
    attempt(shown, () => {
      const file = dir.openAt({}, temp, { create: true, exclusive: true }, { write: true });
      try {
        let offset = 0;
        while (offset < contents.length) {
          offset += Number(file.write(contents.subarray(offset), BigInt(offset)));
        }
        file.sync();
        dir.renameAt(temp, dir, rel);
      } catch (error) {
        try {
          dir.unlinkFileAt(temp);
        } catch {
          // The error that brought us here matters more.
        }
        throw error;
      }
    });
  },

  /** Replaces (or creates) a file with UTF-8 text; see `writeBytes`. @param {string} path @param {string} text */
  writeText(path, text) {
    fs.writeBytes(path, new TextEncoder().encode(String(text)));
  },

  /**
   * The entries of a directory, sorted by name: `{ name, type }`, where
   * `type` is `file`, `directory`, `symlink` or `other`.
   * @param {string} path
   */
  list(path) {
    const { shown, dir, rel } = locate(path);
    return attempt(shown, () => {
      const stream = dir.openAt({ symlinkFollow: true }, rel, { directory: true }, { read: true }).readDirectory();
      const entries = [];
      for (let entry = stream.readDirectoryEntry(); entry; entry = stream.readDirectoryEntry()) {
        entries.push({ name: entry.name, type: kind(entry.type) });
      }
      return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    });
  },

  /**
   * What is at `path` (following symlinks): `{ type, size, modified }`, with
   * `size` in bytes and `modified` a `Date` (or undefined).
   * @param {string} path
   */
  stat(path) {
    const { shown, dir, rel } = locate(path);
    return attempt(shown, () => {
      const stat = dir.statAt({ symlinkFollow: true }, rel);
      const time = stat.dataModificationTimestamp;
      return {
        type: kind(stat.type),
        size: Number(stat.size),
        modified: time ? new Date(Number(time.seconds) * 1000 + Math.floor(time.nanoseconds / 1e6)) : undefined,
      };
    });
  },

  /** Whether something exists at `path` (a path outside the mounts does not). @param {string} path */
  exists(path) {
    try {
      fs.stat(path);
      return true;
    } catch (error) {
      if (error instanceof ToolError) return false;
      throw error;
    }
  },
};

function kind(type) {
  switch (type) {
    case "regular-file":
      return "file";
    case "directory":
      return "directory";
    case "symbolic-link":
      return "symlink";
    default:
      return "other";
  }
}

/**
 * The mount that holds `path` (the innermost one), the path inside it, and
 * `path` as messages show it.
 */
function locate(path) {
  const absolute = fs.resolve(path);
  let best;
  for (const [dir, mount] of getDirectories()) {
    const prefix = mount.endsWith("/") ? mount : `${mount}/`;
    if (absolute !== mount && !absolute.startsWith(prefix)) continue;
    if (best === undefined || mount.length > best.mount.length) {
      best = { dir, mount, rel: absolute === mount ? "." : absolute.slice(prefix.length) || "." };
    }
  }
  const shown = fs.display(absolute);
  if (best === undefined) {
    const granted = fs.mounts().map(fs.display).join(", ") || "none";
    throw new ToolError(`\`${shown}\` is outside the directories this tool may access (granted: ${granted})`);
  }
  return { shown, dir: best.dir, rel: best.rel };
}

/** Whether these mount names are those of a Windows host. @param {string[]} names */
function isWindows(names) {
  return names.some(hasDrive);
}

/** Whether `path` starts with a drive in the sandbox's form: `/C:` alone or followed by `/`. */
function hasDrive(path) {
  return path.startsWith("/") && isDrive(path.slice(1, 3)) && (path.length === 3 || path[3] === "/");
}

/** Whether `text` is a drive letter and a colon, such as `C:`. */
function isDrive(text) {
  const letter = asciiLower(text.slice(0, 1));
  return text.length === 2 && letter >= "a" && letter <= "z" && text[1] === ":";
}

/** `text` with ASCII capitals made small (and no other letter changed). */
function asciiLower(text) {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/**
 * A Windows path in the sandbox's form: no `\\?\` prefix, `/` for `\`, and
 * `C:/x` written `/C:/x`. Throws a `ToolError` for a drive-relative path
 * (`C:x`).
 */
function posixForm(given) {
  let path = given.startsWith("\\\\?\\") ? given.slice(4) : given;
  path = path.replaceAll("\\", "/");
  if (!isDrive(path.slice(0, 2))) return path;
  if (path.length > 2 && path[2] !== "/") {
    throw new ToolError(
      `\`${given}\` is relative to a drive's current folder; drive-relative paths are not supported: ` +
        `give a full path (\`${path.slice(0, 2)}\\folder\\file\`) or one relative to the first mounted folder`,
    );
  }
  return `/${path}`;
}

/** The names in `path`, without empty ones. */
function components(path) {
  return path.split("/").filter((name) => name !== "");
}

/**
 * `path` with its leading folders spelled as the mount they match, ignoring
 * case (the longest such mount wins, the last of equals, as in the guest's
 * libc); unchanged when it matches none.
 */
function respell(path, granted) {
  const names = components(path);
  const folded = names.map(asciiLower);
  let best;
  let depth = -1;
  for (const mount of granted) {
    const prefix = components(mount).map(asciiLower);
    if (prefix.length >= depth && prefix.every((name, i) => name === folded[i])) {
      best = mount;
      depth = prefix.length;
    }
  }
  if (best === undefined) return path;
  const rest = names.slice(depth).join("/");
  return rest === "" ? best : `${best.replace(/\/+$/, "")}/${rest}`;
}

/** Runs `f`, turning a WASI filesystem error into a `ToolError` about `path`. */
function attempt(path, f) {
  try {
    return f();
  } catch (error) {
    const code = error?.payload;
    if (typeof code !== "string") throw error;
    throw new ToolError(`cannot access \`${path}\`: ${REASONS[code] ?? code}`);
  }
}

const REFUSED =
  "permission denied (the sandbox refuses paths that leave a granted directory, including through `..` or a symlink, and writes to read-only mounts)";

const REASONS = {
  "no-entry": "no such file or directory",
  "not-permitted": REFUSED,
  access: REFUSED,
  "read-only": "the directory is mounted read-only",
  unsupported: "not supported (the sandbox does not open named pipes, sockets or devices)",
  "is-directory": "it is a directory",
  "not-directory": "a part of the path is not a directory",
  exist: "it already exists",
  "name-too-long": "the name is too long",
  loop: "too many levels of symbolic links",
  "insufficient-space": "no space left on the device",
  "file-too-large": "the file is too large",
};
