import difflib
a = ["one", "two", "three", "four"]
b = ["one", "too", "three", "five", "six"]
for line in difflib.unified_diff(a, b, "a.txt", "b.txt", lineterm=""):
    print(line)
print(difflib.get_close_matches("appel", ["ape", "apple", "peach", "puppy"]))
print(round(difflib.SequenceMatcher(None, "kitten", "sitting").ratio(), 4))
