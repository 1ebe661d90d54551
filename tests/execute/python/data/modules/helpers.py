import csv

from toolkit import stats


def column(path, name):
    with open(path, newline="") as f:
        return [float(row[name]) for row in csv.DictReader(f)]


def summary(values):
    return {"mean": stats.mean(values), "spread": stats.spread(values)}
