tests = [
    lambda: int("abc"),
    lambda: [1][5],
    lambda: {"a": 1}["b"],
    lambda: None.upper(),
    lambda: 1 + "a",
    lambda: float("x"),
    lambda: [].pop(),
    lambda: "abc".index("z"),
    lambda: 1 / 0,
    lambda: open("does-not-exist.txt"),
]
for t in tests:
    try:
        t()
    except Exception as e:
        print(type(e).__name__, "|", e)
