class Inventory {
  #items = new Map();
  add(name, qty, price) {
    const cur = this.#items.get(name) ?? { qty: 0, price };
    cur.qty += qty;
    cur.price = price;
    this.#items.set(name, cur);
    return this;
  }
  remove(name, qty) {
    const cur = this.#items.get(name);
    if (!cur || cur.qty < qty) throw new RangeError(`not enough ${name}`);
    cur.qty -= qty;
  }
  get value() { let v = 0; for (const { qty, price } of this.#items.values()) v += qty * price; return v; }
  *[Symbol.iterator]() { yield* [...this.#items].sort(([a], [b]) => (a < b ? -1 : 1)); }
}
const inv = new Inventory().add('bolt', 100, 0.05).add('nut', 250, 0.02).add('gear', 3, 12.5);
inv.remove('bolt', 40);
try { inv.remove('gear', 5); } catch (e) { console.log(`${e.name}: ${e.message}`); }
for (const [name, { qty }] of inv) console.log(name, qty);
console.log('value', inv.value.toFixed(2));
console.log(inv);
