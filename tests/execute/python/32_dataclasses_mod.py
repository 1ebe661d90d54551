from dataclasses import dataclass, field, asdict, replace
@dataclass(order=True)
class Item:
    price: float
    name: str = field(compare=False)
    tags: list = field(default_factory=list, compare=False)
items = [Item(3.5, "b"), Item(1.25, "a", ["x"]), Item(2.0, "c")]
print(sorted(items)[0])
print(asdict(items[1]))
print(replace(items[0], price=9.0))
@dataclass(frozen=True)
class P:
    x: int
    y: int = 0
p = P(1)
try:
    p.x = 5
except Exception as e:
    print(type(e).__name__)
print(p == P(1, 0), hash(p) == hash(P(1)))
