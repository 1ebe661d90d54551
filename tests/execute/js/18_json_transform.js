const fs = require('fs');
const users = JSON.parse(fs.readFileSync('data/users.json', 'utf8'));
const summary = users.map(({ id, name, tags, ...rest }) => ({ id, first: name.split(' ')[0], n: tags.length, adult: rest.age >= 18 }));
console.table === undefined || console.log(summary);
console.log(JSON.stringify(summary));
console.log(JSON.stringify({ a: [1, { b: 2 }], c: 'x' }, null, '\t'));
console.log(JSON.stringify({ d: new Date(0), u: undefined, f() {}, n: NaN, big: 1e21 }));
console.log(JSON.parse('{"x":[1,2,{"y":null}]}', (k, v) => (typeof v === 'number' ? v * 10 : v)));
console.log(JSON.stringify([...new Map([['k', 1]])]), JSON.stringify('é\u2028'));
