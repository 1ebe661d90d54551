matrix = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
print([row[i] for i in range(3) for row in matrix][:5])
print(list(zip(*matrix)))
print({x: x ** 2 for x in range(5)}, {c for c in "hello"} == set("helo"))
print([[i * j for j in range(1, 4)] for i in range(1, 4)])
words = ["apple", "bob", "kayak", "level", "python"]
print([w for w in words if w == w[::-1]], sorted(words, key=len, reverse=True))
print(dict(zip("abc", range(3))), list(enumerate("xy", start=1)))
print(any(x > 8 for row in matrix for x in row), all(len(r) == 3 for r in matrix))
