import unicodedata
for ch in "aé€😀":
    print(ch, hex(ord(ch)), unicodedata.name(ch), unicodedata.category(ch))
print(unicodedata.normalize("NFD", "é").encode("utf-8"), len(unicodedata.normalize("NFC", "e\u0301")))
print(unicodedata.numeric("½"), unicodedata.lookup("GREEK SMALL LETTER ALPHA"))
s = "Crème brûlée à la façon"
print("".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c)))
