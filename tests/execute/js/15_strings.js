const s = 'The Quick Brown Fox';
console.log(s.length, s.toUpperCase(), s.at(-1), s.slice(4, 9), s.indexOf('Brown'));
console.log(s.split(' ').map((w) => w[0]).join(''), [...'héllo'].reverse().join(''));
console.log('abc'.padStart(6, '*'), 'abc'.padEnd(6, '-') + '|', 'ab'.repeat(3));
console.log('a,b,,c'.split(','), 'x'.codePointAt(0), String.fromCharCode(72, 105));
console.log('😀'.length, [...'😀'].length, 'é'.normalize('NFD').length);
console.log(`multi
line`, 'tab\there', JSON.stringify('quote"d\n'));
console.log(['b', 'a', 'c'].sort(), ['10', '9', '1'].sort(), [10, 9, 1].sort());
console.log('a-b_c d'.split(/[-_ ]/), 'Title Case'.startsWith('Title'), 'x'.localeCompare('y'));
