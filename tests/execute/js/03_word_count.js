const fs = require('fs');
const text = fs.readFileSync('data/notes.txt', 'utf8');
const words = text.toLowerCase().match(/\p{L}+/gu);
const counts = new Map();
for (const w of words) counts.set(w, (counts.get(w) || 0) + 1);
const top = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 5);
console.log(top);
console.log('lines:', text.split('\n').filter(Boolean).length, 'words:', words.length);
console.log(counts.get('über'), counts.has('naïve'));
