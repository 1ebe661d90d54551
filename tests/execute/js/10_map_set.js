const a = new Set([1, 2, 3, 4]);
const b = new Set([3, 4, 5]);
console.log(new Set([...a].filter((x) => b.has(x))), new Set([...a, ...b]).size);
const m = new Map();
m.set('x', 1).set({ k: 1 }, [1, 2]).set(3, new Set(['q']));
console.log(m);
console.log([...m.keys()].length, m.get('x'), m.has(3));
const wm = new WeakMap();
const key = {};
wm.set(key, 'v');
console.log(wm.get(key), wm.has({}));
const grouped = new Map();
for (const w of ['apple', 'avocado', 'banana', 'blueberry', 'cherry']) {
  const k = w[0];
  if (!grouped.has(k)) grouped.set(k, []);
  grouped.get(k).push(w);
}
console.log(grouped);
