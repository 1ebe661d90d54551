import heapq, bisect
h = [5, 1, 8, 3, 9, 2]
heapq.heapify(h)
print([heapq.heappop(h) for _ in range(3)], heapq.nlargest(2, [5, 1, 8, 3]), heapq.nsmallest(2, [5, 1, 8, 3]))
tasks = []
for prio, name in [(3, "c"), (1, "a"), (2, "b")]:
    heapq.heappush(tasks, (prio, name))
print([heapq.heappop(tasks)[1] for _ in range(3)])
grades = [60, 70, 80, 90]
print([("FDCBA")[bisect.bisect(grades, s)] for s in [33, 99, 77, 70, 89, 90, 100]])
a = [1, 3, 5]
bisect.insort(a, 4)
print(a, bisect.bisect_left(a, 3), bisect.bisect_right(a, 3))
print(list(heapq.merge([1, 4, 7], [2, 5, 8])))
