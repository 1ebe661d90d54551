# CSV as exports really look: quoted fields holding newlines and commas,
# blank lines, escaped delimiters, numbers, and a broken row.
import csv
import io

export = (
    'id,name,comment\r\n'
    '1,Ada,"Likes ""quotes"", commas,\r\nand two lines"\r\n'
    '\r\n'
    '2,Bob,plain\r\n'
    '3,"Chen, Li",""\r\n'
)
reader = csv.reader(io.StringIO(export, newline=""))
for row in reader:
    print(reader.line_num, row)
print(reader.dialect.delimiter, reader.dialect.quotechar, reader.dialect.doublequote)

for record in csv.DictReader(io.StringIO(export, newline="")):
    print(record["id"], repr(record["comment"]))

print(list(csv.reader(["1,2.5,-3\n", '"4",,6e2\n'], quoting=csv.QUOTE_NONNUMERIC)))
print(list(csv.reader(["path\\,with\\,commas;x\n"], delimiter=";", escapechar="\\")))
print(list(csv.reader(["a,  b,   c\n"], skipinitialspace=True)))
print(list(csv.reader(["name\tcity\n", "Ada\tLondon\n"], dialect="excel-tab")))

try:
    list(csv.reader(['a,"b" c\n'], strict=True))
except csv.Error as e:
    print("strict:", e)
try:
    list(csv.reader(["x,y\rz\n"]))
except csv.Error as e:
    print("error:", e)

rows = list(csv.reader(io.StringIO('a,"unterminated\nfield', newline="")))
print(rows)

out = io.StringIO()
writer = csv.writer(out)
writer.writerows([["k", "v"], ["multi", "line\nvalue"], ["quote", 'say "hi"']])
print(list(csv.reader(io.StringIO(out.getvalue(), newline=""))))

# The writer: what it quotes and escapes under each quoting rule.
for options in ({}, {"quoting": csv.QUOTE_NONNUMERIC}, {"quoting": csv.QUOTE_ALL},
                {"quoting": csv.QUOTE_NONE, "escapechar": "\\"}, {"lineterminator": "\n"}):
    out = io.StringIO()
    w = csv.writer(out, **options)
    w.writerow(["a,b", 'say "x"', 3, 2.5, None, "", "back\\slash"])
    try:
        w.writerow([""])
    except csv.Error as e:
        print("error:", e)
    print(repr(out.getvalue()))
