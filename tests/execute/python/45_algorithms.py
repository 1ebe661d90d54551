from collections import deque
graph = {"a": ["b", "c"], "b": ["d"], "c": ["d", "e"], "d": ["f"], "e": ["f"], "f": []}
def bfs(start, goal):
    q = deque([[start]])
    seen = {start}
    while q:
        path = q.popleft()
        if path[-1] == goal:
            return path
        for n in graph[path[-1]]:
            if n not in seen:
                seen.add(n)
                q.append(path + [n])
print(bfs("a", "f"))
def topo(g):
    order, seen = [], set()
    def visit(n):
        if n in seen:
            return
        seen.add(n)
        for m in g[n]:
            visit(m)
        order.append(n)
    for n in sorted(g):
        visit(n)
    return order[::-1]
print(topo(graph))
def binary_search(xs, x):
    lo, hi = 0, len(xs)
    while lo < hi:
        mid = (lo + hi) // 2
        if xs[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo
print(binary_search(list(range(0, 100, 3)), 42))
