import sys
first = input()
rest = sys.stdin.read().split()
print("first:", first)
print("numbers:", sum(int(x) for x in rest))
