"""Compares run_python's CSV reader and writer (plugins/python/src/csv_port.py) with CPython's.

Run it with CPython (`python3 tests/execute/python/compare_csv.py`): it loads the port over
CPython's own `_csv` module, reads the same lines with both readers (hand-picked cases, and
random lines over a small alphabet of the characters that matter) and writes the same random
rows with both writers, under a dozen dialects. It prints every input where the rows,
`line_num`s, written text or errors differ, and exits 1 if any do. Not part of the tests (they
need no CPython); run it after changing the port.
"""

import _csv
import csv
import decimal
import io
import pathlib
import random
import sys

SOURCE = pathlib.Path(__file__).resolve().parents[3] / "plugins/python/src/csv_port.py"
scope = {"_csv": _csv}
exec(compile(SOURCE.read_text(), str(SOURCE), "exec"), scope)
port, port_writer = scope["reader"], scope["writer"]

WRITER_DIALECTS = [
    {}, {"quoting": csv.QUOTE_ALL}, {"quoting": csv.QUOTE_NONNUMERIC},
    {"quoting": csv.QUOTE_NONE, "escapechar": "\\"}, {"quoting": csv.QUOTE_NONE},
    {"escapechar": "\\"}, {"doublequote": False, "escapechar": "\\"}, {"doublequote": False},
    {"delimiter": ";"}, {"lineterminator": "\n"}, {"quotechar": "'"}, {"dialect": "excel-tab"},
    {"lineterminator": "X"},
]

DIALECTS = [
    {}, {"skipinitialspace": True}, {"strict": True}, {"escapechar": "\\"},
    {"quoting": csv.QUOTE_NONNUMERIC}, {"quoting": csv.QUOTE_NONE, "escapechar": "\\"},
    {"delimiter": " ", "skipinitialspace": True}, {"doublequote": False, "escapechar": "\\"},
    {"delimiter": ";"}, {"quotechar": "'"}, {"dialect": "excel-tab"}, {"quoting": csv.QUOTE_NONE},
]
CASES = [
    ["a,b\r\n", "1,2\r\n"], ["\n", "\r\n", "a,b\r\n", "x, y"], ["a\rb\n"], ['"abc\n'],
    ['a,"b\n', 'c",d\n', "e\n"], ['a,"b""c",d\n', ' "x" ,y\n'], ['"a"b,c\n'], ['a"b,"c\n', 'd"\n'],
    [""], ["a,b"], ['"a","",""\n'], [",,\n"], ['a,"b\r\n', "\r\n", 'c"\r\n'], ['x,"open\n'],
    ["1,2.5,x\n"], ["1,,3\n"], ['"1",2\n'], ["a\\,b,c\n"], ["a\\\n", "b,c\n"], ['"a\\"b",c\n'],
    ["a,b\\"], ['  a,  "b"\n'], ["a  b   c\n"], [b"a\n"], ['a,"b" c,d\n'], ['"a"\n', '"b"  \n'],
    ["a,b\n\n"], ['"q\r\nr",s\r\n'],
]
BAD_ARGUMENTS = [
    {"delimiter": ""}, {"delimiter": "ab"}, {"delimiter": 1}, {"quotechar": 1}, {"escapechar": ""},
    {"quoting": 9}, {"quoting": "x"}, {"quotechar": None, "quoting": csv.QUOTE_ALL}, {"bogus": 1},
]


def read(reader, lines, arguments):
    rows = []
    try:
        it = reader(lines, **arguments)
        for row in it:
            rows.append((row, it.line_num))
        return rows, None
    except Exception as error:
        return rows, (type(error).__name__, str(error))


def write(writer, rows, arguments):
    out = io.StringIO()
    try:
        it = writer(out, **arguments)
        for row in rows:
            it.writerow(row)
        return out.getvalue(), None
    except Exception as error:
        return out.getvalue(), (type(error).__name__, str(error))


def random_field(chance, alphabet):
    kind = chance.random()
    if kind < 0.12:
        return chance.randint(-5, 50)
    if kind < 0.2:
        return chance.random() * 10
    if kind < 0.25:
        return None
    if kind < 0.28:
        return True
    if kind < 0.3:
        return decimal.Decimal("1.5")
    return "".join(chance.choice(alphabet) for _ in range(chance.randint(0, 5)))


def main():
    inputs = [(lines, arguments) for lines in CASES for arguments in DIALECTS]
    inputs += [(["a\n"], arguments) for arguments in BAD_ARGUMENTS]
    chance = random.Random(1)
    alphabet = ["a", "b", ",", '"', "\\", " ", "\n", "\r", ";", "'"]
    for _ in range(20000):
        lines = ["".join(chance.choice(alphabet) for _ in range(chance.randint(0, 8)))
                 for _ in range(chance.randint(1, 4))]
        inputs.append((lines, chance.choice(DIALECTS)))
    differences = 0
    for lines, arguments in inputs:
        expected, got = read(_csv.reader, lines, arguments), read(port, lines, arguments)
        if expected != got:
            differences += 1
            print(f"{lines!r} {arguments}\n  CPython: {expected}\n  port:    {got}")
    written = [([[]], {}), ([[""]], {}), ([[None]], {}), ([[""]], {"quoting": csv.QUOTE_NONE}), ([7], {})]
    alphabet.append("1")
    for _ in range(30000):
        rows = [[random_field(chance, alphabet) for _ in range(chance.randint(0, 4))]
                for _ in range(chance.randint(1, 2))]
        written.append((rows, chance.choice(WRITER_DIALECTS)))
    for rows, arguments in written:
        expected, got = write(_csv.writer, rows, arguments), write(port_writer, rows, arguments)
        if expected != got:
            differences += 1
            print(f"{rows!r} {arguments}\n  CPython: {expected}\n  port:    {got}")
    print(f"{len(inputs)} read and {len(written)} written inputs, {differences} differences")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
