import itertools as it
print(list(it.permutations("abc", 2)))
print(list(it.combinations(range(4), 2)))
print(list(it.product([0, 1], repeat=2)))
print(list(it.accumulate([1, 2, 3, 4])), list(it.accumulate([1, 2, 3], lambda a, b: a * b)))
print(list(it.islice(it.count(10, 5), 4)), list(it.chain("ab", [1, 2])))
print([(k, len(list(g))) for k, g in it.groupby("aaabccdd")])
print(list(it.zip_longest("ab", "xyz", fillvalue="-")), list(it.pairwise([1, 2, 3])))
print(list(it.compress("abcdef", [1, 0, 1, 0, 1, 1])), list(it.takewhile(lambda x: x < 3, [1, 2, 5, 1])))
