const sleep = (ms, v) => new Promise((r) => setTimeout(() => r(v), ms));
async function main() {
  console.log('start');
  const results = await Promise.all([sleep(30, 'a'), sleep(10, 'b'), 'c']);
  console.log(results);
  const first = await Promise.race([sleep(20, 'slow'), sleep(5, 'fast')]);
  console.log(first);
  const settled = await Promise.allSettled([Promise.reject(new Error('no')), Promise.resolve(1)]);
  console.log(settled.map((s) => s.status));
  try { await Promise.any([Promise.reject(1), Promise.reject(2)]); } catch (e) { console.log(e.constructor.name, e.errors); }
  return 'done';
}
main().then((v) => console.log(v));
console.log('sync end');
