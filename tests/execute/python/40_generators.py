def fib():
    a, b = 0, 1
    while True:
        yield a
        a, b = b, a + b
from itertools import islice
print(list(islice(fib(), 12)))
def chunks(seq, n):
    for i in range(0, len(seq), n):
        yield seq[i:i + n]
print(list(chunks("abcdefgh", 3)))
def delegate():
    yield from range(3)
    return "end"
g = delegate()
print(list(g))
squares = (x * x for x in range(10) if x % 2)
print(sum(squares), next(iter([7])))
def acc():
    total = 0
    while True:
        x = yield total
        total += x
a = acc(); next(a)
print([a.send(i) for i in (5, 10, 20)])
