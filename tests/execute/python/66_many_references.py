# One object referenced tens of thousands of times: counters, grids, flags, defaults.
counts = [0] * 100000
for i in range(0, 100000, 7):
    counts[i] += 1
print(sum(counts), counts[:8])
grid = [[0] * 400 for _ in range(400)]
grid[3][5] = 9
print(sum(map(sum, grid)), len(grid) * len(grid[0]))
flags = [False] * 60000 + [None] * 60000
print(flags.count(False), flags.count(None))
seen = dict.fromkeys(range(70000), "unseen")
print(len(seen), len(set(seen.values())))
label = "row"
rows = [label] * 50000
print(len(rows), rows[-1])
