class Temp:
    __slots__ = ("_c",)
    def __init__(self, c):
        self._c = c
    @property
    def f(self):
        return self._c * 9 / 5 + 32
    @f.setter
    def f(self, value):
        self._c = (value - 32) * 5 / 9
    @classmethod
    def boiling(cls):
        return cls(100)
    @staticmethod
    def valid(c):
        return c >= -273.15
t = Temp.boiling()
print(t.f)
t.f = 32
print(t._c, Temp.valid(-300))
try:
    t.other = 1
except AttributeError as e:
    print("AttributeError")
