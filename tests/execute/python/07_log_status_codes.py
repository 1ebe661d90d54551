import re
codes = {}
for line in open("server.log"):
    m = re.search(r" (GET|POST) (\S+) (\d{3}) ", line)
    if m:
        codes.setdefault(m.group(3), set()).add(m.group(2))
for code in sorted(codes):
    print(code, sorted(codes[code]))
