class Shape {
  constructor(name) { this.name = name; }
  area() { return 0; }
  toString() { return `${this.name} with area ${this.area().toFixed(2)}`; }
}
class Circle extends Shape {
  #r;
  constructor(r) { super('circle'); this.#r = r; }
  area() { return Math.PI * this.#r ** 2; }
  get radius() { return this.#r; }
  static unit() { return new Circle(1); }
}
class Rect extends Shape {
  constructor(w, h) { super('rect'); this.w = w; this.h = h; }
  area() { return this.w * this.h; }
}
const shapes = [new Circle(2), new Rect(3, 4), Circle.unit()];
for (const s of shapes) console.log(String(s));
console.log(shapes[1]);
console.log(shapes[0] instanceof Shape, shapes[0].radius, Object.getPrototypeOf(Circle) === Shape);
console.log(`${shapes[2]}`);
console.log(shapes.map((s) => s.constructor.name));
