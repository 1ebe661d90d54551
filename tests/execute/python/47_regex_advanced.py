import re
text = "Contact: ada@example.com, grace.hopper@navy.mil; bad@x"
print(re.findall(r"[\w.]+@[\w]+\.[a-z]{2,}", text))
m = re.search(r"(?P<user>[\w.]+)@(?P<host>navy\.mil)", text)
print(m.group("user"), m.groupdict(), m.span())
print(re.sub(r"(\w+)@(\w+)", r"\2 at \1", "ada@example"))
print(re.split(r"[,;]\s*", text))
print(re.sub(r"\d+", lambda m: str(int(m.group()) * 2), "a1 b22 c333"))
print(bool(re.fullmatch(r"\d{3}-\d{4}", "555-1234")), re.match(r"a", "ba"))
print(re.findall(r"(?i)the", "The THE the"), re.escape("a.b*c"))
print(re.compile(r"^\s*#", re.M).findall("# a\n  # b\nc"))
