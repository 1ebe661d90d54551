class Vec:
    def __init__(self, *xs):
        self.xs = tuple(xs)
    def __add__(self, other):
        return Vec(*(a + b for a, b in zip(self.xs, other.xs)))
    def __mul__(self, k):
        return Vec(*(a * k for a in self.xs))
    __rmul__ = __mul__
    def __eq__(self, other):
        return self.xs == other.xs
    def __hash__(self):
        return hash(self.xs)
    def __len__(self):
        return len(self.xs)
    def __getitem__(self, i):
        return self.xs[i]
    def __iter__(self):
        return iter(self.xs)
    def __repr__(self):
        return f"Vec{self.xs}"
    def __bool__(self):
        return any(self.xs)
v = Vec(1, 2) + Vec(3, 4)
print(v, 2 * v, v * 3, len(v), v[0], list(v), v == Vec(4, 6), bool(Vec(0, 0)))
print({Vec(1): "a"}[Vec(1)], sum(Vec(1, 2, 3)), max(Vec(5, 2)))
