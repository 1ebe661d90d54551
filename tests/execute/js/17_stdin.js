const input = require('fs').readFileSync(0, 'utf8');
const nums = input.split(/\s+/).filter(Boolean).map(Number);
console.log('count', nums.length, 'sum', nums.reduce((a, b) => a + b, 0));
console.log('max', Math.max(...nums));
