const fs = require('fs');
const text = fs.readFileSync('data/sales.csv', 'utf8');
const [header, ...rows] = text.trim().split('\n');
const cols = header.split(',');
const records = rows.map((line) => Object.fromEntries(line.split(',').map((v, i) => [cols[i], v])));
const totals = {};
for (const r of records) {
  totals[r.region] = (totals[r.region] ?? 0) + Number(r.units) * Number(r.price);
}
for (const [region, total] of Object.entries(totals).sort((a, b) => b[1] - a[1])) {
  console.log(`${region.padEnd(6)} ${total.toFixed(2).padStart(8)}`);
}
console.log(records.length, 'rows');
console.log(records[0]);
