from fractions import Fraction
a = Fraction(1, 3) + Fraction(1, 6)
print(a, a.numerator, a.denominator, float(a))
print(Fraction("3.1415").limit_denominator(100), Fraction(0.75))
print(sum(Fraction(1, n) for n in range(1, 6)))
print(Fraction(7, 3) // 1, Fraction(-7, 3) % 1)
