const log = '2024-03-01 ERROR disk full\n2024-03-02 INFO ok\n2024-03-03 ERROR cpu hot';
const re = /^(?<date>\d{4}-\d{2}-\d{2}) (?<level>[A-Z]+) (?<msg>.*)$/gm;
for (const m of log.matchAll(re)) {
  if (m.groups.level === 'ERROR') console.log(m.groups.date, '->', m.groups.msg);
}
console.log('a1b22c333'.replace(/\d+/g, (d) => `[${d.length}]`));
console.log('Hello World'.split(/(?=[A-Z])/));
console.log(/\p{Script=Greek}/u.test('αβγ'), 'x'.match(/y/), 'aaa'.lastIndexOf('a'));
console.log('camelCaseString'.replace(/([A-Z])/g, '_$1').toLowerCase());
console.log('  trim me  '.trim() + '|', 'abc'.replaceAll('b', 'B'));
const email = /^[\w.+-]+@[\w-]+\.[\w.]+$/;
console.log(['a@b.co', 'bad@', 'x.y+z@q-r.org'].map((s) => email.test(s)));
console.log(/(\d+)-(\d+)/.exec('range 10-20').slice(1), /a/y.sticky, /s/dgimsuy.flags);
