import math
print(math.sqrt(2), math.pi, math.e)
print(math.floor(-2.5), math.ceil(-2.5), math.trunc(-2.5))
print(math.gcd(48, 36), math.lcm(4, 6), math.factorial(20), math.comb(10, 3), math.perm(5, 2))
print(math.isclose(0.1 + 0.2, 0.3), 0.1 + 0.2)
print(math.log(1000, 10), math.log2(1024), math.hypot(3, 4), math.degrees(math.pi))
print(math.inf > 1e308, math.isnan(float("nan")), math.fsum([0.1] * 10), sum([0.1] * 10))
