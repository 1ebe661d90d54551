const path = require('path');
const fs = require('fs');
console.log(path.join('a', 'b', '../c', 'd.txt'), path.basename('/x/y/z.tar.gz'), path.extname('z.tar.gz'));
console.log(path.dirname('/x/y/z.txt'), path.basename('/x/y/z.txt', '.txt'), path.normalize('/a//b/./c/..'));
console.log(path.parse('/home/u/file.txt'), path.isAbsolute('rel/p'), path.relative('/a/b/c', '/a/d'));
const files = fs.readdirSync('data');
console.log(files);
for (const f of files) {
  const st = fs.statSync(path.join('data', f));
  console.log(f, st.isFile(), st.isDirectory(), st.size);
}
console.log(fs.existsSync('data/sales.csv'), fs.existsSync('data/nope.csv'), fs.statSync('data').isDirectory());
try { fs.readFileSync('data/missing.txt', 'utf8'); } catch (e) { console.log(e.code, e.syscall); }
