import csv
from datetime import date
from itertools import groupby
with open("sales.csv", newline="") as f:
    rows = list(csv.DictReader(f))
def month(row):
    return date.fromisoformat(row["date"]).strftime("%Y-%m")
for key, group in groupby(sorted(rows, key=month), key=month):
    group = list(group)
    print(key, len(group), sum(int(r["units"]) for r in group))
