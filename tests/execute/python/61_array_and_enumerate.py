from array import array
a = array("i", [1, 2, 3])
a.append(4)
print(a, a.tolist(), a.itemsize, sum(a))
b = array("d", [0.5, 1.5])
print(b[1], len(b))
for i, (k, v) in enumerate(sorted({"x": 1, "y": 2}.items())):
    print(i, k, v)
