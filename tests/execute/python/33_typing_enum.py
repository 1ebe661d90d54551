from enum import Enum, IntEnum, Flag, auto
from typing import NamedTuple, Optional, TypedDict
class Color(Enum):
    RED = 1
    GREEN = 2
class Perm(Flag):
    R = auto()
    W = auto()
    X = auto()
class Level(IntEnum):
    LOW = 1
    HIGH = 10
print(Color.RED, Color(2).name, [c.value for c in Color], Color["GREEN"] is Color.GREEN)
print((Perm.R | Perm.W).value, Perm.R in (Perm.R | Perm.X), Level.HIGH > Level.LOW, Level.LOW + 1)
class Emp(NamedTuple):
    name: str
    boss: Optional[str] = None
print(Emp("a"), Emp._fields)
class Movie(TypedDict):
    title: str
    year: int
m: Movie = {"title": "Up", "year": 2009}
print(m, Movie.__annotations__["year"].__name__)
