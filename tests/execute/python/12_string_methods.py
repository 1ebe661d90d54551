s = "  Hello, World!  "
print(s.strip().lower(), s.strip().upper(), s.strip().title())
print(s.split(","), "-".join(["a", "b", "c"]))
print("abc".center(9, "*"), "42".zfill(5), "x".ljust(3, ".") + "|")
print("Mississippi".count("ss"), "Mississippi".replace("ss", "SS", 1))
print("hello world".capitalize(), "Hello".swapcase(), "abc".startswith(("x", "a")))
print("a,b,,c".split(","), "  a  b ".split(), "line1\nline2".splitlines())
print("ß".upper(), "İ".lower().encode("utf-8"), "straße".casefold())
