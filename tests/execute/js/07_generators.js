function* fib() {
  let [a, b] = [0, 1];
  while (true) { yield a; [a, b] = [b, a + b]; }
}
function* take(n, it) { for (const x of it) { if (n-- <= 0) return; yield x; } }
console.log([...take(12, fib())]);
const it = take(2, fib());
console.log(it.next(), it.next(), it.next());
function* tree(node) { yield node.v; for (const c of node.c || []) yield* tree(c); }
console.log([...tree({ v: 1, c: [{ v: 2, c: [{ v: 3 }] }, { v: 4 }] })].join('-'));
