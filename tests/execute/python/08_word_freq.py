import re
from collections import Counter
text = open("poem.txt", encoding="utf-8").read().lower()
words = re.findall(r"[a-z']+", text)
counts = Counter(words)
for word, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:6]:
    print(f"{word:<8}{n}")
print(len(words), len(counts))
