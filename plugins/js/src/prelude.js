// The Node-like globals a script sees: console, process, require('fs'),
// require('path'), require('util'), module and exports. Runs before the
// script, in the same realm; `native` is the host's functions (engine.rs),
// `util` the value of inspect.js.
(function (native, util) {
  'use strict';

  const { inspect, format } = util;

  // Error.prototype.stack as V8 shows it: the error's `name: message` line,
  // then the frames (Boa's getter gives the frames alone).
  const stackDescriptor = Object.getOwnPropertyDescriptor(Error.prototype, 'stack');
  if (stackDescriptor && stackDescriptor.get) {
    const frames = stackDescriptor.get;
    Object.defineProperty(Error.prototype, 'stack', {
      get() {
        const text = frames.call(this);
        if (typeof text !== 'string') return text;
        let head;
        try {
          head = Error.prototype.toString.call(this);
        } catch {
          head = 'Error';
        }
        const trimmed = text.replace(/\n+$/, '');
        return trimmed === '' ? head : `${head}\n${trimmed}`;
      },
      set: stackDescriptor.set,
      enumerable: false,
      configurable: true,
    });
  }

  // console: output goes to the tool's captured stdout and stderr.
  let groupIndent = '';
  function emit(fd, args) {
    let text = format(...args);
    if (groupIndent !== '') text = groupIndent + text.split('\n').join(`\n${groupIndent}`);
    native.write(fd, `${text}\n`);
  }
  const counts = new Map();
  const timers = new Map();
  const console = {
    log: (...args) => emit(1, args),
    info: (...args) => emit(1, args),
    debug: (...args) => emit(1, args),
    error: (...args) => emit(2, args),
    warn: (...args) => emit(2, args),
    trace: (...args) => emit(2, [`Trace: ${format(...args)}`]),
    dir: (value, options) => native.write(1, `${groupIndent}${inspect(value, options)}\n`),
    assert: (condition, ...args) => {
      if (!condition) emit(2, args.length === 0 ? ['Assertion failed'] : [`Assertion failed: ${format(...args)}`]);
    },
    group: (...args) => {
      if (args.length > 0) emit(1, args);
      groupIndent += '  ';
    },
    groupEnd: () => {
      groupIndent = groupIndent.slice(0, -2);
    },
    count: (label = 'default') => {
      const n = (counts.get(label) || 0) + 1;
      counts.set(label, n);
      emit(1, [`${label}: ${n}`]);
    },
    countReset: (label = 'default') => counts.delete(label),
    time: (label = 'default') => timers.set(label, Date.now()),
    timeEnd: (label = 'default') => {
      const start = timers.get(label);
      timers.delete(label);
      if (start !== undefined) emit(1, [`${label}: ${Date.now() - start}ms`]);
    },
    timeLog: (label = 'default', ...args) => {
      const start = timers.get(label);
      if (start !== undefined) emit(1, [`${label}: ${Date.now() - start}ms`, ...args]);
    },
    table: (data) => emit(1, [data]),
  };
  console.groupCollapsed = console.group;

  // path: POSIX paths, as Node's path.posix.
  function normalizeString(path, allowAboveRoot) {
    const parts = [];
    for (const part of path.split('/')) {
      if (part === '' || part === '.') continue;
      if (part === '..') {
        if (parts.length > 0 && parts[parts.length - 1] !== '..') parts.pop();
        else if (allowAboveRoot) parts.push('..');
      } else {
        parts.push(part);
      }
    }
    return parts.join('/');
  }
  function assertPath(path, name = 'path') {
    if (typeof path !== 'string') {
      throw new TypeError(`The "${name}" argument must be of type string. Received ${inspect(path)}`);
    }
  }
  const path = {
    sep: '/',
    delimiter: ':',
    resolve(...args) {
      let resolved = '';
      let absolute = false;
      for (let i = args.length - 1; i >= -1 && !absolute; i--) {
        const p = i >= 0 ? args[i] : process.cwd();
        assertPath(p, `paths[${i}]`);
        if (p === '') continue;
        resolved = `${p}/${resolved}`;
        absolute = p.startsWith('/');
      }
      resolved = normalizeString(resolved, !absolute);
      if (absolute) return `/${resolved}`;
      return resolved.length > 0 ? resolved : '.';
    },
    normalize(p) {
      assertPath(p);
      if (p === '') return '.';
      const absolute = p.startsWith('/');
      const trailing = p.endsWith('/');
      let out = normalizeString(p, !absolute);
      if (out === '' && !absolute) out = '.';
      if (out !== '' && trailing) out += '/';
      return absolute ? `/${out}` : out;
    },
    isAbsolute(p) {
      assertPath(p);
      return p.startsWith('/');
    },
    join(...args) {
      for (const arg of args) assertPath(arg);
      const joined = args.filter((arg) => arg !== '').join('/');
      return joined === '' ? '.' : path.normalize(joined);
    },
    relative(from, to) {
      from = path.resolve(from);
      to = path.resolve(to);
      if (from === to) return '';
      const a = from.split('/').filter(Boolean);
      const b = to.split('/').filter(Boolean);
      let i = 0;
      while (i < a.length && i < b.length && a[i] === b[i]) i++;
      return [...Array(a.length - i).fill('..'), ...b.slice(i)].join('/');
    },
    dirname(p) {
      assertPath(p);
      if (p === '') return '.';
      const trimmed = p.length > 1 ? p.replace(/\/+$/, '') : p;
      const index = trimmed.lastIndexOf('/');
      if (index === -1) return '.';
      if (index === 0) return '/';
      return trimmed.slice(0, index).replace(/\/+$/, '') || '/';
    },
    basename(p, ext) {
      assertPath(p);
      const trimmed = p.replace(/\/+$/, '');
      let base = trimmed.slice(trimmed.lastIndexOf('/') + 1);
      if (ext !== undefined && base.endsWith(ext) && base !== ext) base = base.slice(0, -ext.length);
      return base;
    },
    extname(p) {
      const base = path.basename(p);
      const index = base.lastIndexOf('.');
      if (index <= 0) return '';
      return base.slice(index);
    },
    parse(p) {
      const root = p.startsWith('/') ? '/' : '';
      const base = path.basename(p);
      const ext = path.extname(p);
      let dir = path.dirname(p);
      if (dir === '.' && !p.includes('/')) dir = '';
      return { root, dir, base, ext, name: ext === '' ? base : base.slice(0, -ext.length) };
    },
    format(o) {
      const dir = o.dir || o.root || '';
      const base = o.base || `${o.name || ''}${o.ext || ''}`;
      if (dir === '') return base;
      return dir === o.root ? `${dir}${base}` : `${dir}/${base}`;
    },
  };
  path.posix = path;

  // fs: a synchronous subset of Node's, on the sandbox's files (WASI).
  const messages = {
    ENOENT: 'no such file or directory',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EEXIST: 'file already exists',
    ENOTDIR: 'not a directory',
    EISDIR: 'illegal operation on a directory',
    ENOTEMPTY: 'directory not empty',
    EROFS: 'read-only file system',
    EINVAL: 'invalid argument',
    EIO: 'i/o error',
  };
  function fsError(code, syscall, p, detail) {
    const reason = messages[code] || detail || code;
    const err = new Error(`${code}: ${reason}, ${syscall} '${p}'`);
    err.errno = -1;
    err.code = code;
    err.syscall = syscall;
    err.path = p;
    return err;
  }
  function check(result, syscall, p) {
    if (result[0] !== null) throw fsError(result[0], syscall, p, result[2]);
    return result[1];
  }
  function toPath(p, name = 'path') {
    if (typeof URL === 'function' && p instanceof URL) p = p.pathname;
    assertPath(p, name);
    return path.resolve(p);
  }
  function encodingOf(options) {
    if (typeof options === 'string') return options;
    if (options && typeof options === 'object') return options.encoding || null;
    return null;
  }
  function decode(text, encoding) {
    if (encoding === null) return new TextEncoder().encode(text);
    if (encoding === 'utf8' || encoding === 'utf-8') return text;
    throw new TypeError(`The encoding \`${encoding}\` is not supported here: use 'utf8'`);
  }
  function toText(data) {
    if (typeof data === 'string') return data;
    if (ArrayBuffer.isView(data)) {
      return new TextDecoder().decode(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    }
    return String(data);
  }
  function stats(info) {
    return {
      size: info.size,
      mtimeMs: info.mtimeMs,
      mtime: new Date(info.mtimeMs),
      isFile: () => info.kind === 'file',
      isDirectory: () => info.kind === 'dir',
      isSymbolicLink: () => info.kind === 'symlink',
    };
  }
  const fs = {
    readFileSync(file, options) {
      const encoding = encodingOf(options);
      if (file === 0 || file === '/dev/stdin') return decode(native.readStdin(), encoding);
      const p = toPath(file);
      return decode(check(native.readFile(p), 'open', file), encoding);
    },
    writeFileSync(file, data) {
      const p = toPath(file);
      check(native.writeFile(p, toText(data), false), 'open', file);
    },
    appendFileSync(file, data) {
      const p = toPath(file);
      check(native.writeFile(p, toText(data), true), 'open', file);
    },
    existsSync(file) {
      try {
        return native.exists(toPath(file));
      } catch {
        return false;
      }
    },
    readdirSync(dir, options) {
      const names = check(native.readdir(toPath(dir)), 'scandir', dir);
      if (options && options.withFileTypes) {
        return names.map((name) => {
          const info = check(native.stat(path.join(toPath(dir), name)), 'stat', name);
          return Object.assign(stats(info), { name });
        });
      }
      return names;
    },
    statSync(file) {
      return stats(check(native.stat(toPath(file)), 'stat', file));
    },
    mkdirSync(dir, options) {
      const recursive = Boolean(options && options.recursive);
      check(native.mkdir(toPath(dir), recursive), 'mkdir', dir);
      return recursive ? toPath(dir) : undefined;
    },
    unlinkSync(file) {
      check(native.remove(toPath(file), false), 'unlink', file);
    },
    rmSync(file, options) {
      const recursive = Boolean(options && options.recursive);
      if (options && options.force && !fs.existsSync(file)) return;
      check(native.remove(toPath(file), recursive), 'rm', file);
    },
    renameSync(from, to) {
      check(native.rename(toPath(from), toPath(to)), 'rename', from);
    },
  };
  fs.lstatSync = fs.statSync;
  fs.rmdirSync = fs.rmSync;
  fs.promises = {};
  for (const name of ['readFile', 'writeFile', 'appendFile', 'readdir', 'stat', 'mkdir', 'unlink', 'rm', 'rename']) {
    const sync = fs[`${name}Sync`];
    fs.promises[name] = (...args) => new Promise((resolve) => resolve(sync(...args)));
    fs[name] = (...args) => {
      const callback = args.pop();
      let result;
      let error = null;
      try {
        result = sync(...args);
      } catch (e) {
        error = e;
      }
      queueMicrotask(() => callback(error, result));
    };
  }
  fs.exists = (file, callback) => queueMicrotask(() => callback(fs.existsSync(file)));

  // process
  const now = () => (typeof performance === 'object' ? performance.now() : Date.now());
  const env = native.env();
  const process = {
    argv: ['node', '[eval]'],
    env,
    platform: 'wasi',
    exitCode: undefined,
    cwd: () => native.cwd(),
    exit(code) {
      native.exit(code === undefined ? (process.exitCode ?? 0) : Number(code) | 0);
    },
    nextTick: (fn, ...args) => queueMicrotask(() => fn(...args)),
    hrtime: Object.assign(
      (previous) => {
        const ns = BigInt(Math.round(now() * 1e6));
        const now = [Number(ns / 1000000000n), Number(ns % 1000000000n)];
        if (!previous) return now;
        let s = now[0] - previous[0];
        let n = now[1] - previous[1];
        if (n < 0) {
          s -= 1;
          n += 1e9;
        }
        return [s, n];
      },
      { bigint: () => BigInt(Math.round(now() * 1e6)) },
    ),
    stdout: { write: (s) => { native.write(1, toText(s)); return true; } },
    stderr: { write: (s) => { native.write(2, toText(s)); return true; } },
    stdin: {
      fd: 0,
      read: () => native.readStdin(),
    },
    binding(name) {
      throw new Error(`process.binding('${name}') is not available in the sandbox: run_js has no native bindings`);
    },
    on: () => process,
    memoryUsage: () => ({ rss: 0, heapTotal: 0, heapUsed: 0, external: 0 }),
  };
  process._linkedBinding = process.binding;
  process.dlopen = () => {
    throw new Error('process.dlopen is not available in the sandbox: run_js loads no native code');
  };

  // require: the modules above; the ones the sandbox cannot offer fail clearly.
  const forbidden = {
    child_process: 'no subprocesses can be started',
    cluster: 'no subprocesses can be started',
    worker_threads: 'no threads can be started',
    net: 'there is no network access',
    http: 'there is no network access',
    https: 'there is no network access',
    http2: 'there is no network access',
    dgram: 'there is no network access',
    dns: 'there is no network access',
    tls: 'there is no network access',
    inspector: 'there is no debugger',
    vm: 'there is no second context (use eval or Function)',
    v8: 'there are no V8 internals (the engine is Boa)',
  };
  const utilModule = {
    inspect,
    format,
    isDeepStrictEqual: (a, b) => inspect(a, { depth: null }) === inspect(b, { depth: null }),
    promisify: (fn) => (...args) => new Promise((resolve, reject) => {
      fn(...args, (err, value) => (err ? reject(err) : resolve(value)));
    }),
    types: {
      isDate: (v) => v instanceof Date,
      isRegExp: (v) => v instanceof RegExp,
      isMap: (v) => v instanceof Map,
      isSet: (v) => v instanceof Set,
      isPromise: (v) => v instanceof Promise,
    },
  };
  const modules = {
    fs,
    path,
    util: utilModule,
    os: { EOL: '\n', platform: () => 'wasi', tmpdir: () => process.cwd() },
    process,
  };
  function require(name) {
    if (typeof name !== 'string') throw new TypeError('require() takes a module name, a string');
    const bare = name.startsWith('node:') ? name.slice(5) : name;
    if (bare === 'fs/promises') return fs.promises;
    if (bare === 'path/posix') return path;
    if (Object.prototype.hasOwnProperty.call(modules, bare)) return modules[bare];
    const base = bare.split('/')[0];
    if (Object.prototype.hasOwnProperty.call(forbidden, base)) {
      const err = new Error(
        `require('${name}'): the module '${base}' is not available in the sandbox: ${forbidden[base]}`,
      );
      err.code = 'ERR_NOT_AVAILABLE_IN_SANDBOX';
      throw err;
    }
    const err = new Error(
      `Cannot find module '${name}': run_js offers only fs (a synchronous subset), path, util, ` +
        'os and process; there are no npm packages and no other files to load',
    );
    err.code = 'MODULE_NOT_FOUND';
    throw err;
  }

  const module = { exports: {}, id: '.', filename: `${native.cwd()}/[eval]`, loaded: false };
  const globals = {
    console,
    process,
    require,
    module,
    exports: module.exports,
    __filename: module.filename,
    __dirname: native.cwd(),
    global: globalThis,
  };
  for (const [name, value] of Object.entries(globals)) {
    Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
  }
})
