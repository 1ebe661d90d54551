pi = 3.14159265
print(f"{pi:.2f} {pi:10.3f}| {pi:<10.1f}| {pi:e}")
print(f"{1234567:,} {1234567:_} {0.25:%} {255:x} {255:#o} {5:08b}")
print("{0} {1} {0}".format("a", "b"), "{name}!".format(name="hi"))
print("%s is %d years, %.1f%%" % ("Ada", 36, 99.5))
print(f"{'left':<8}|{'right':>8}|{'mid':^8}|")
x = 10
print(f"{x=}, {x*2=}")
print(format(-0.0, ".1f"), round(2.5), round(3.5), round(-2.675, 2))
