const data = {
  name: 'report',
  items: [{ id: 1, tags: ['a', 'b'], meta: { deep: { deeper: { deepest: 1 } } } }],
  empty: {}, list: [], nothing: null, undef: undefined, fn() {}, arrow: () => 1,
  'key with space': 1, nested: { a: [1, [2, [3, [4, [5]]]]] },
};
console.log(data);
console.log([[1, 2], [3, 4]], [{ a: 1, b: 2 }, { a: 3, b: 4 }]);
console.log({ long: 'x'.repeat(30), longer: 'y'.repeat(30), longest: 'z'.repeat(30) });
const circ = { name: 'c' };
circ.self = circ;
console.log(circ);
console.log(['it\'s', "say \"hi\"", 'both \' and "'], [undefined, null, NaN, -0, Infinity]);
console.log(Object.create(null), [1, , 3], new Array(5), Symbol.iterator);
console.log({ [Symbol('s')]: 1, 1: 'num key', b: true });
console.log(Array.from({ length: 8 }, (_, i) => 'item' + i));
console.log(Array.from({ length: 120 }, (_, i) => i));
