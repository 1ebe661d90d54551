function binarySearch(arr, target) {
  let lo = 0, hi = arr.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (arr[mid] === target) return mid;
    arr[mid] < target ? (lo = mid + 1) : (hi = mid - 1);
  }
  return -1;
}
const arr = Array.from({ length: 1000 }, (_, i) => i * 3);
console.log(binarySearch(arr, 2997), binarySearch(arr, 1000));
function quicksort(a) { if (a.length < 2) return a; const [p, ...r] = a; return [...quicksort(r.filter((x) => x < p)), p, ...quicksort(r.filter((x) => x >= p))]; }
console.log(quicksort([9, 4, 7, 1, 8, 2, 2, 0]));
let seed = 42;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const nums = Array.from({ length: 10 }, () => Math.floor(rand() * 100));
console.log(nums, nums.toSorted((a, b) => a - b));
const primes = [];
for (let n = 2; primes.length < 15; n++) if (primes.every((p) => n % p)) primes.push(n);
console.log(primes);
