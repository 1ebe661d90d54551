import re
data = [1, 5, 12, 7, 20]
if (n := len(data)) > 3:
    print(f"{n} items")
print([y for x in data if (y := x * 2) > 10])
print(sorted({3, 1, 2}), frozenset([1, 2]) | {3} == {1, 2, 3})
a, *rest, z = range(6)
print(a, rest, z)
first, (second, third) = 1, (2, 3)
print(first + second + third)
print(isinstance(True, int), type(None).__name__, (1).__class__.__name__)
print(divmod(17, 5), abs(-3.5), round(1234.5678, -2), int(7.9), chr(65), ord("a"))
