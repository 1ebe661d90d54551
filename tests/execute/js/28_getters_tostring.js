class Temp {
  static #count = 0;
  constructor(c) { this.c = c; Temp.#count++; }
  get f() { return this.c * 9 / 5 + 32; }
  set f(v) { this.c = (v - 32) * 5 / 9; }
  static get count() { return Temp.#count; }
  [Symbol.toPrimitive](hint) { return hint === 'number' ? this.c : `${this.c}°C`; }
}
const t = new Temp(100);
console.log(t.f, `${t}`, +t, t + '');
t.f = 32;
console.log(t.c, Temp.count, new Temp(1) > new Temp(0), Temp.count);
console.log(t, Object.getOwnPropertyNames(Temp.prototype));
