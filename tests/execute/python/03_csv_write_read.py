import csv, io
buf = io.StringIO()
w = csv.writer(buf)
w.writerow(["name", "quote"])
w.writerow(["Ada", 'She said "hi", then left'])
w.writerow(["Bob", "line1\nline2"])
text = buf.getvalue()
print(repr(text))
for row in csv.reader(io.StringIO(text)):
    print(row)
