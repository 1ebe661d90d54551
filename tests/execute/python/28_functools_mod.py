from functools import reduce, lru_cache, partial, cmp_to_key, total_ordering, wraps
print(reduce(lambda a, b: a * b, range(1, 6)))
@lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
print(fib(80), fib.cache_info().hits)
int2 = partial(int, base=2)
print(int2("1011"))
print(sorted(["b", "A", "c"], key=cmp_to_key(lambda x, y: (x.lower() > y.lower()) - (x.lower() < y.lower()))))
def deco(f):
    @wraps(f)
    def inner(*a):
        return f(*a) * 2
    return inner
@deco
def double_me(x):
    "doc"
    return x
print(double_me(21), double_me.__name__, double_me.__doc__)
