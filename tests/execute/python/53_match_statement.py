def describe(cmd):
    match cmd.split():
        case ["go", direction]:
            return f"moving {direction}"
        case ["take", *items] if items:
            return f"taking {', '.join(items)}"
        case ["quit" | "exit"]:
            return "bye"
        case []:
            return "nothing"
        case _:
            return f"unknown: {cmd}"
for c in ["go north", "take sword shield", "exit", "", "dance"]:
    print(describe(c))
def shape(p):
    match p:
        case {"x": x, "y": y}:
            return f"point {x},{y}"
        case (a, b):
            return f"pair {a} {b}"
        case int(n) if n > 0:
            return "positive int"
    return "other"
print(shape({"x": 1, "y": 2}), shape((3, 4)), shape(5), shape(-1))
