from contextlib import contextmanager, suppress
import io
@contextmanager
def tag(name):
    print(f"<{name}>")
    try:
        yield name.upper()
    finally:
        print(f"</{name}>")
with tag("b") as t:
    print("inside", t)
with suppress(KeyError):
    {}["x"]
    print("not reached")
class Res:
    def __enter__(self):
        print("enter"); return self
    def __exit__(self, *exc):
        print("exit", exc[0].__name__ if exc[0] else None); return True
with Res():
    raise ValueError("swallowed")
print("after")
