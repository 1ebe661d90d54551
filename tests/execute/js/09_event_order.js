console.log('1 sync');
setTimeout(() => console.log('5 timeout 0'), 0);
setTimeout(() => console.log('6 timeout 10'), 10);
Promise.resolve().then(() => console.log('3 microtask'));
queueMicrotask(() => console.log('4 queueMicrotask'));
console.log('2 sync');
