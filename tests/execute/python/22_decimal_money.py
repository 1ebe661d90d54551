from decimal import Decimal, ROUND_HALF_UP, getcontext
prices = [Decimal("19.99"), Decimal("5.01"), Decimal("0.10")]
total = sum(prices)
print(total, total * Decimal("1.2"))
print((total * Decimal("0.075")).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
print(Decimal("1") / Decimal("7"))
getcontext().prec = 6
print(Decimal("1") / Decimal("7"), Decimal(2).sqrt())
print(Decimal("0.1") + Decimal("0.2") == Decimal("0.3"))
