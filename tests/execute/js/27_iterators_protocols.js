class Range {
  constructor(a, b, step = 1) { Object.assign(this, { a, b, step }); }
  [Symbol.iterator]() { let v = this.a; const { b, step } = this; return { next: () => (v < b ? { value: (v += step) - step, done: false } : { value: undefined, done: true }) }; }
}
console.log([...new Range(0, 10, 3)], Math.max(...new Range(1, 5)));
const [first, , third, ...rest] = new Range(0, 6);
console.log(first, third, rest);
async function* ticker(n) { for (let i = 0; i < n; i++) { await null; yield i; } }
(async () => { const got = []; for await (const t of ticker(4)) got.push(t); console.log('async iter', got); })();
const entries = Object.entries({ b: 2, a: 1 }).map(([k, v]) => `${k}=${v}`);
console.log(entries.join('&'));
