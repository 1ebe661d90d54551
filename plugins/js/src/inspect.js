// Node's util.inspect, util.format and uncaught-error report, written from
// what Node 20 prints (not from its source). One expression: its value is
// `{ inspect, format, formatError }`, which engine.rs hands to the prelude.
(() => {
  'use strict';

  const defaults = { depth: 2, breakLength: 80, maxArrayLength: 100, showHidden: false };

  // Whether `fn.call(value)` works: how built-in kinds are told apart
  // without trusting Symbol.toStringTag or a forged prototype.
  function branded(fn, value) {
    try {
      fn.call(value);
      return true;
    } catch {
      return false;
    }
  }
  const getter = (proto, name) => Object.getOwnPropertyDescriptor(proto, name).get;
  const mapSize = getter(Map.prototype, 'size');
  const setSize = getter(Set.prototype, 'size');
  const regexpSource = getter(RegExp.prototype, 'source');
  const bufferLength = getter(ArrayBuffer.prototype, 'byteLength');
  const typedArrayTag = getter(Object.getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag);
  const boxes = [
    ['Number', Number.prototype.valueOf],
    ['String', String.prototype.valueOf],
    ['Boolean', Boolean.prototype.valueOf],
    ['Symbol', Symbol.prototype.valueOf],
    ['BigInt', BigInt.prototype.valueOf],
  ];

  // Strings: single quotes unless the text has some; then double quotes,
  // then backticks, then escaped single quotes.
  const escapes = { '\n': '\\n', '\t': '\\t', '\r': '\\r', '\b': '\\b', '\f': '\\f', '\v': '\\v', '\\': '\\\\' };
  function quote(text) {
    let q = "'";
    if (text.includes("'")) {
      if (!text.includes('"')) q = '"';
      else if (!text.includes('`') && !text.includes('${')) q = '`';
    }
    const body = text.replace(/[\x00-\x1f\x7f\\'"`]/g, (c) => {
      if (c === q) return `\\${c}`;
      if (escapes[c]) return escapes[c];
      if (c < ' ' || c === '\x7f') return `\\x${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
      return c;
    });
    return q + body + q;
  }

  function primitive(value) {
    switch (typeof value) {
      case 'string': return quote(value);
      case 'number': return Object.is(value, -0) ? '-0' : String(value);
      case 'bigint': return `${value}n`;
      case 'symbol': return value.toString();
      default: return String(value);
    }
  }

  const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;
  function formatKey(key) {
    if (typeof key === 'symbol') return `[${key.toString()}]`;
    return identifier.test(key) ? key : quote(key);
  }

  // The name of the nearest constructor on the prototype chain, or null for a
  // null prototype.
  function constructorName(value) {
    for (let proto = Object.getPrototypeOf(value); proto !== null; proto = Object.getPrototypeOf(proto)) {
      const ctor = Object.getOwnPropertyDescriptor(proto, 'constructor');
      if (ctor && typeof ctor.value === 'function' && ctor.value.name !== '') return ctor.value.name;
    }
    return null;
  }

  // `Foo [tag] ` before the braces, or nothing for a plain object/array.
  function prefix(value, name, fallback, size) {
    const sized = size === undefined ? '' : `(${size})`;
    if (name === null) return `[${fallback}${sized}: null prototype] `;
    const tag = Object.prototype.hasOwnProperty.call(value, Symbol.toStringTag) ? undefined : value[Symbol.toStringTag];
    const tagged = typeof tag === 'string' && tag !== '' && tag !== name ? ` [${tag}]` : '';
    if (name === fallback && sized === '' && tagged === '' && (fallback === 'Object' || fallback === 'Array')) return '';
    return `${name}${sized}${tagged} `;
  }

  // The built-in constructors, taken before any script runs: Boa shows a
  // class's source as `[native code]`, so a class is told from them by its
  // read-only `prototype` (an ordinary function's is writable).
  const builtins = new Set(Object.getOwnPropertyNames(globalThis)
    .map((name) => Object.getOwnPropertyDescriptor(globalThis, name).value)
    .filter((value) => typeof value === 'function'));
  function isClass(fn) {
    let source = '';
    try {
      source = Function.prototype.toString.call(fn);
    } catch {}
    if (/^class\b/.test(source)) return true;
    const proto = Object.getOwnPropertyDescriptor(fn, 'prototype');
    return proto !== undefined && !proto.writable && !builtins.has(fn);
  }

  function functionBase(fn) {
    if (isClass(fn)) {
      const parent = Object.getPrototypeOf(fn);
      const ext = parent && parent.name ? ` extends ${parent.name}` : '';
      return `[class ${fn.name || '(anonymous)'}${ext}]`;
    }
    const kind = constructorName(fn) || 'Function';
    return fn.name ? `[${kind}: ${fn.name}]` : `[${kind} (anonymous)]`;
  }

  function errorBase(error, ctx) {
    let stack = '';
    try {
      stack = error.stack;
    } catch {}
    if (typeof stack !== 'string' || stack === '') {
      return `[${Error.prototype.toString.call(error)}]`;
    }
    // Inside a container the stack lines follow the container's indentation.
    return ctx.indent === '' ? stack : stack.split('\n').join(`\n${ctx.indent}`);
  }

  // The entries of `value`'s own enumerable keys (and symbols), `key: value`.
  function ownKeys(value, skip) {
    const keys = Object.keys(value).filter((k) => !skip(k));
    for (const sym of Object.getOwnPropertySymbols(value)) {
      if (Object.prototype.propertyIsEnumerable.call(value, sym)) keys.push(sym);
    }
    return keys;
  }
  function propertyEntries(value, ctx, level, skip) {
    return ownKeys(value, skip).map((key) => property(value, key, ctx, level, formatKey(key)));
  }

  function property(value, key, ctx, level, label) {
    const desc = Object.getOwnPropertyDescriptor(value, key);
    if (desc.get || desc.set) {
      return `${label}: [${desc.get ? (desc.set ? 'Getter/Setter' : 'Getter') : 'Setter'}]`;
    }
    ctx.indent += '  ';
    const text = formatValue(desc.value, ctx, level + 1);
    ctx.indent = ctx.indent.slice(2);
    return `${label}: ${text}`;
  }

  // Formats the items of an array or typed array: holes as `<N empty items>`,
  // at most maxArrayLength of them.
  function arrayEntries(value, ctx, level) {
    const out = [];
    const limit = Math.min(value.length, ctx.maxArrayLength);
    let holes = 0;
    const flush = () => {
      if (holes > 0) out.push(`<${holes} empty item${holes > 1 ? 's' : ''}>`);
      holes = 0;
    };
    let i = 0;
    for (; i < value.length && out.length < limit; i++) {
      if (!Object.prototype.hasOwnProperty.call(value, i)) {
        holes++;
        continue;
      }
      flush();
      ctx.indent += '  ';
      out.push(formatValue(value[i], ctx, level + 1));
      ctx.indent = ctx.indent.slice(2);
    }
    flush();
    const rest = value.length - i;
    if (rest > 0) out.push(`... ${rest} more item${rest > 1 ? 's' : ''}`);
    return out;
  }

  // Arrays of more than six short entries go in aligned columns. The number
  // of columns grows with the square root of the entry count over the entry
  // width (fitted to Node's choices), at most 12 and what fits in the line;
  // arrays of only numbers are right-aligned, others left-aligned. A
  // trailing `... N more items` stays on its own line.
  function columns(out, value, ctx) {
    const more = out.length > 0 && out[out.length - 1].startsWith('... ') ? out.pop() : undefined;
    const widths = out.map((s) => s.length);
    const longest = Math.max(...widths) + 2;
    const total = widths.reduce((sum, w) => sum + w + 2, 0);
    let grouped = out;
    if (longest * 3 + ctx.indent.length < ctx.breakLength && (total / longest > 5 || longest <= 8)) {
      const bias = Math.max(longest - 3 - Math.sqrt(longest - total / (out.length + (more ? 1 : 0))), 1);
      const count = Math.min(
        Math.round(Math.sqrt(2.5 * bias * out.length) / bias),
        Math.floor((ctx.breakLength - ctx.indent.length) / longest),
        12,
      );
      if (count > 1) {
        const numeric = value !== undefined && out.every((_, i) => typeof value[i] === 'number' || typeof value[i] === 'bigint');
        const colWidth = [];
        for (let c = 0; c < count; c++) {
          colWidth.push(Math.max(...widths.filter((_, i) => i % count === c)));
        }
        grouped = [];
        for (let i = 0; i < out.length; i += count) {
          const row = out.slice(i, i + count).map((s, c) => {
            const last = i + c === Math.min(i + count, out.length) - 1;
            if (numeric) return s.padStart(colWidth[c]) + (last ? '' : ',');
            return last ? s : `${s},`.padEnd(colWidth[c] + 1);
          });
          grouped.push(row.join(' '));
        }
      }
    }
    if (more) grouped.push(more);
    return grouped;
  }

  // One line when it fits in breakLength (counting the indentation and some
  // slack) and the entries nest less than three levels deep; otherwise one
  // entry per line.
  function assemble(base, open, close, out, ctx, level, columned) {
    const head = base === '' ? '' : `${base} `;
    if (!columned && ctx.deepest - level < 3) {
      const width = out.reduce((sum, s) => sum + s.length, 0) + 2 * out.length +
        ctx.indent.length + open.length + base.length + 10;
      if (width <= ctx.breakLength && !out.some((s) => s.includes('\n')) && !base.includes('\n')) {
        return `${head}${open} ${out.join(', ')} ${close}`;
      }
    }
    const nl = `\n${ctx.indent}`;
    return `${head}${open}${nl}  ${out.join(`,${nl}  `)}${nl}${close}`;
  }

  // A string with line breaks that does not fit goes one line per piece,
  // joined with `+`.
  function longString(text, ctx) {
    const pieces = text.match(/[^\n]*\n|[^\n]+$/g) || [];
    if (text.length <= 16 || text.length <= ctx.breakLength - ctx.indent.length - 4 || pieces.length < 2) {
      return quote(text);
    }
    return pieces.map(quote).join(` +\n${ctx.indent}  `);
  }

  function formatValue(value, ctx, level) {
    if (typeof value === 'string') return longString(value, ctx);
    if ((typeof value !== 'object' && typeof value !== 'function') || value === null) {
      return primitive(value);
    }
    if (ctx.seen.includes(value)) {
      if (!ctx.refs.has(value)) ctx.refs.set(value, ctx.refs.size + 1);
      return `[Circular *${ctx.refs.get(value)}]`;
    }
    const text = formatObject(value, ctx, level);
    const ref = ctx.refs.get(value);
    return ref === undefined ? text : `<ref *${ref}> ${text}`;
  }

  function formatObject(value, ctx, level) {
    const name = constructorName(value);
    const isArray = Array.isArray(value);
    const typed = ArrayBuffer.isView(value) && !(value instanceof DataView) ? typedArrayTag.call(value) : undefined;
    let base = '';
    let open = '{';
    let close = '}';
    let entries = () => [];
    let skip = () => false;
    let kind = 'Object';
    let size = 0; // how many items (array, map, set), for the empty check
    let bare;
    if (isArray || typed !== undefined) {
      kind = typed || 'Array';
      base = prefix(value, name, kind, typed === undefined && name === 'Array' ? undefined : value.length).trim();
      [open, close] = ['[', ']'];
      size = value.length;
      entries = () => arrayEntries(value, ctx, level);
      skip = (k) => String(k >>> 0) === k; // the items show already
    } else if (branded(mapSize, value)) {
      kind = 'Map';
      size = mapSize.call(value);
      base = prefix(value, name, kind, size).trim();
      entries = () => [...Map.prototype.entries.call(value)].map(([k, v]) => {
        ctx.indent += '  ';
        const text = `${formatValue(k, ctx, level + 1)} => ${formatValue(v, ctx, level + 1)}`;
        ctx.indent = ctx.indent.slice(2);
        return text;
      });
    } else if (branded(setSize, value)) {
      kind = 'Set';
      size = setSize.call(value);
      base = prefix(value, name, kind, size).trim();
      entries = () => [...Set.prototype.values.call(value)].map((v) => {
        ctx.indent += '  ';
        const text = formatValue(v, ctx, level + 1);
        ctx.indent = ctx.indent.slice(2);
        return text;
      });
    } else if (typeof value === 'function') {
      bare = base = functionBase(value);
    } else if (value instanceof Error) {
      base = errorBase(value, ctx);
      kind = 'Error';
      // name and message show in the stack already.
      skip = (k) => k === 'stack' || ((k === 'name' || k === 'message') && base.includes(value[k]));
    } else if (branded(Date.prototype.getTime, value)) {
      const time = Date.prototype.getTime.call(value);
      bare = base = Number.isNaN(time) ? 'Invalid Date' : Date.prototype.toISOString.call(value);
    } else if (value !== RegExp.prototype && branded(regexpSource, value)) {
      bare = base = RegExp.prototype.toString.call(value);
    } else if (branded(bufferLength, value)) {
      kind = 'ArrayBuffer';
      size = 1;
      base = prefix(value, name, kind).trim();
      entries = () => {
        const length = bufferLength.call(value);
        const shown = Math.min(length, ctx.maxArrayLength);
        const bytes = [...new Uint8Array(value, 0, shown)].map((b) => b.toString(16).padStart(2, '0'));
        const more = length > shown ? ` ... ${length - shown} more byte${length - shown > 1 ? 's' : ''}` : '';
        return [`[Uint8Contents]: <${bytes.join(' ')}${more}>`, `byteLength: ${length}`];
      };
    } else if (value instanceof Promise) {
      kind = 'Promise';
      size = 1;
      base = prefix(value, name, kind).trim();
      // A script cannot see a promise's state synchronously.
      entries = () => ['<unknown>'];
    } else {
      const box = boxes.find(([, valueOf]) => branded(valueOf, value));
      if (box) {
        const inner = box[1].call(value);
        bare = base = `[${box[0]}${name === box[0] ? '' : ` (${name})`}: ${primitive(inner)}]`;
        if (box[0] === 'String') skip = (k) => String(k >>> 0) === k;
      } else {
        base = prefix(value, name, 'Object').trim();
      }
    }

    // An error's `cause` shows as `[cause]` though it is not enumerable.
    const cause = kind === 'Error' && Object.prototype.hasOwnProperty.call(value, 'cause') &&
      !Object.prototype.propertyIsEnumerable.call(value, 'cause');
    if (level > ctx.depth) {
      if (bare !== undefined) return bare;
      if (kind === 'Error') return cause || ownKeys(value, skip).length > 0 ? `[${name || 'Error'}]` : base;
      // Empty containers still print as such past the depth limit.
      if (size === 0 && ownKeys(value, skip).length === 0) {
        return `${base === '' ? '' : `${base} `}${open}${close}`;
      }
      return name === null ? `[${kind}: null prototype]` : `[${name === 'Object' ? kind : name}]`;
    }
    ctx.seen.push(value);
    const outer = ctx.deepest;
    ctx.deepest = level;
    let items = entries();
    // Arrays of more than six items may go in columns; a changed count of
    // lines means columns were made, and forces one line per row.
    let columned = false;
    if (items.length > 6 && (isArray || typed !== undefined)) {
      const rows = columns(items.slice(), value, ctx);
      columned = rows.length !== items.length;
      items = rows;
    }
    if (ctx.showHidden && isArray) items.push(`[length]: ${value.length}`);
    const extra = propertyEntries(value, ctx, level, skip);
    if (cause) extra.push(property(value, 'cause', ctx, level, '[cause]'));
    ctx.seen.pop();
    const out = items.concat(extra);
    if (out.length === 0) {
      ctx.deepest = outer; // an empty object adds no nesting
      if (bare !== undefined || kind === 'Error') return base;
      return `${base === '' ? '' : `${base} `}${open}${close}`;
    }
    return assemble(base, open, close, out, ctx, level, columned);
  }

  function inspect(value, options) {
    const opts = Object.assign({}, defaults, typeof options === 'object' && options !== null ? options : {});
    const ctx = {
      depth: opts.depth === null ? Infinity : opts.depth,
      breakLength: opts.breakLength,
      maxArrayLength: opts.maxArrayLength === null ? Infinity : opts.maxArrayLength,
      showHidden: Boolean(opts.showHidden),
      indent: '',
      seen: [],
      refs: new Map(),
      deepest: 0,
    };
    return formatValue(value, ctx, 0);
  }

  // util.format: printf-like specifiers in a first string, then the other
  // arguments, strings bare and the rest inspected.
  function format(...args) {
    const show = (v) => (typeof v === 'string' ? v : inspect(v));
    if (typeof args[0] !== 'string') return args.map(show).join(' ');
    let next = 1;
    const first = args[0].replace(/%([sdifjoOc%])/g, (whole, spec) => {
      if (spec === '%') return '%';
      if (next >= args.length) return whole;
      const arg = args[next++];
      switch (spec) {
        case 's':
          if (typeof arg === 'bigint') return `${arg}n`;
          if (typeof arg === 'symbol') return arg.toString();
          if (typeof arg === 'number') return primitive(arg);
          if (typeof arg === 'object' && arg !== null) {
            // A toString the script wrote is used; built-in ones are not.
            const custom = typeof arg.toString === 'function' &&
              !Function.prototype.toString.call(arg.toString).includes('[native code]');
            return custom ? String(arg) : inspect(arg, { depth: 0 });
          }
          return String(arg);
        case 'd': return typeof arg === 'bigint' ? `${arg}n` : typeof arg === 'object' ? 'NaN' : primitive(Number(arg));
        case 'i': return typeof arg === 'bigint' ? `${arg}n` : typeof arg === 'object' ? 'NaN' : String(parseInt(arg, 10));
        case 'f': return typeof arg === 'symbol' ? 'NaN' : String(parseFloat(arg));
        case 'j':
          try {
            return JSON.stringify(arg);
          } catch {
            return '[Circular]';
          }
        case 'o': return inspect(arg, { showHidden: true, depth: 4 });
        case 'O': return inspect(arg);
        default: return ''; // %c: CSS, ignored outside a browser
      }
    });
    return [first, ...args.slice(next).map(show)].join(' ');
  }

  // What Node prints for an uncaught error (engine.rs prefixes "Uncaught ").
  function formatError(error) {
    return inspect(error);
  }

  return { inspect, format, formatError };
})()
