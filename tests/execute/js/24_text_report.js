const fs = require('fs');
const rows = fs.readFileSync('data/sales.csv', 'utf8').trim().split('\n').slice(1).map((l) => l.split(','));
const byMonth = {};
for (const [date, , product, units] of rows) {
  const month = date.slice(0, 7);
  byMonth[month] ??= {};
  byMonth[month][product] = (byMonth[month][product] || 0) + +units;
}
const products = [...new Set(rows.map((r) => r[2]))].sort();
console.log(['month', ...products].map((h) => h.padEnd(8)).join('|'));
console.log('-'.repeat(8 * (products.length + 1) + products.length));
for (const [m, counts] of Object.entries(byMonth)) {
  console.log([m, ...products.map((p) => String(counts[p] || 0))].map((c) => c.padEnd(8)).join('|'));
}
console.log(byMonth);
