class AppError(Exception):
    def __init__(self, code, msg):
        super().__init__(msg)
        self.code = code
def risky(n):
    if n == 0:
        raise ValueError("zero")
    if n == 1:
        raise AppError(42, "custom")
    return 10 / (n - 2)
for n in range(4):
    try:
        print("ok", risky(n))
    except ZeroDivisionError as e:
        print("zde:", e)
    except AppError as e:
        print("app:", e.code, e)
    except ValueError as e:
        print("value:", e)
    else:
        print("no error")
    finally:
        print("done", n)
try:
    try:
        {}["missing"]
    except KeyError as e:
        raise RuntimeError("wrapped") from e
except RuntimeError as e:
    print(repr(e), repr(e.__cause__))
