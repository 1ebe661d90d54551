let f = 1n;
for (let i = 1n; i <= 30n; i++) f *= i;
console.log(f);
console.log(f.toString().length, typeof f, 2n ** 100n);
console.log(BigInt(Number.MAX_SAFE_INTEGER) + 2n, 7n / 2n, -7n % 3n);
console.log(BigInt.asUintN(8, 257n), 10n > 9, 10n == 10);
console.log([1n, 2n], { big: 3n });
