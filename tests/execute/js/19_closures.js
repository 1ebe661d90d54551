function counter() { let n = 0; return { inc: () => ++n, get: () => n }; }
const c = counter();
c.inc(); c.inc();
console.log(c.get());
const memo = (fn) => { const cache = new Map(); return (x) => cache.has(x) ? cache.get(x) : (cache.set(x, fn(x)), cache.get(x)); };
const fib = memo((n) => (n < 2 ? n : fib(n - 1) + fib(n - 2)));
console.log(fib(90));
const compose = (...fns) => (x) => fns.reduceRight((v, f) => f(v), x);
console.log(compose((x) => x + 1, (x) => x * 2)(5));
const fns = [];
for (let i = 0; i < 3; i++) fns.push(() => i);
console.log(fns.map((f) => f()));
function curry(f) { return function c(...a) { return a.length >= f.length ? f(...a) : (...b) => c(...a, ...b); }; }
console.log(curry((a, b, c) => a + b + c)(1)(2)(3));
