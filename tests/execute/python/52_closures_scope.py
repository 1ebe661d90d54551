def counter():
    count = 0
    def inc(step=1):
        nonlocal count
        count += step
        return count
    return inc
c = counter()
print(c(), c(), c(5))
funcs = [lambda x, i=i: x + i for i in range(3)]
print([f(10) for f in funcs])
x = "global"
def show():
    global x
    x = "changed"
show()
print(x)
def kw(a, /, b, *, c=3, **rest):
    return a, b, c, rest
print(kw(1, 2), kw(1, b=5, c=6, d=7))
def star(*args, **kwargs):
    return args, sorted(kwargs.items())
print(star(1, *[2, 3], **{"z": 1, "y": 2}))
