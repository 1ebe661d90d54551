import re
from collections import Counter
pattern = re.compile(r"^(\S+ \S+) (\w+)\s+(.*)$")
levels = Counter()
slow = []
with open("server.log") as f:
    for line in f:
        m = pattern.match(line.rstrip("\n"))
        if not m:
            continue
        levels[m.group(2)] += 1
        ms = re.search(r"(\d+)ms$", m.group(3))
        if ms and int(ms.group(1)) > 100:
            slow.append(m.group(1))
print(sorted(levels.items()))
print(levels.most_common(1))
print(slow)
