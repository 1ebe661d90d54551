people = [("bob", 25, 3.5), ("alice", 30, 3.9), ("carol", 25, 3.9), ("dave", 35, 2.0)]
print(sorted(people, key=lambda p: (-p[2], p[0])))
print(sorted(people, key=lambda p: p[1], reverse=True))
from operator import itemgetter, attrgetter
print(sorted(people, key=itemgetter(1, 0)))
print(min(people, key=itemgetter(2))[0], max(p[1] for p in people))
data = ["10", "9", "100", "1"]
print(sorted(data), sorted(data, key=int))
print(sorted("Hello World".split(), key=str.lower))
