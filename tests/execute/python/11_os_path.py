import os, os.path
print(os.path.join("a", "b", "c.txt"))
print(os.path.splitext("archive.tar.gz"))
print(os.path.basename("/x/y/z.py"), os.path.dirname("/x/y/z.py"))
print(os.path.normpath("a/./b/../c"))
print(os.path.isfile("sales.csv"), os.path.isdir("nested"), os.path.exists("nope"))
print(sorted(os.listdir("nested")))
