import csv
from collections import defaultdict
totals = defaultdict(float)
with open("sales.csv", newline="") as f:
    for row in csv.DictReader(f):
        totals[row["region"]] += int(row["units"]) * float(row["price"])
for region in sorted(totals):
    print(f"{region:>6}: {totals[region]:8.2f}")
print("grand total:", round(sum(totals.values()), 2))
