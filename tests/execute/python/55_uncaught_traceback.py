def parse(value):
    return int(value)
def load(values):
    return [parse(v) for v in values]
print("before")
load(["1", "2", "x"])
print("never")
