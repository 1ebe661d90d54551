# CPython's CSV reader and writer, for `_csv.reader` and `_csv.writer` (the
# prelude puts them there when the code first imports `csv` or `_csv`; see
# `_MendCsv` in prelude.py).
#
# RustPython's own reader gets common files wrong: it stops at the first empty
# line, ends a quoted field at the end of its line (a field holding a newline
# is split in two rows), ignores `escapechar`, `strict` and
# QUOTE_NONNUMERIC's floats, and panics (ending the run) on some input; its
# writer escapes and quotes differently from CPython's in over a quarter of
# random rows. The reader is the state machine of CPython's `Modules/_csv.c`,
# line by line, with two fast paths for the lines most files are made of: one
# that splits a line with no quote, escape or line break inside, and one that
# reads a line of well-formed quoted and unquoted fields with a regular
# expression. A line either does not take goes through the state machine,
# which also reads the records that go on over several lines.
#
# Run with the `_csv` module as `_csv` in its globals; leaves `reader` and
# `writer` there. `tests/execute/python/compare_csv.py` compares both with
# CPython's.

import re as _re

_QUOTE_MINIMAL, _QUOTE_ALL, _QUOTE_NONNUMERIC, _QUOTE_NONE = 0, 1, 2, 3
# Python 3.12's: an unquoted empty field reads as None; STRINGS also makes the
# other unquoted fields floats.
_QUOTE_STRINGS, _QUOTE_NOTNULL = 4, 5

(_START_RECORD, _START_FIELD, _ESCAPED_CHAR, _IN_FIELD, _IN_QUOTED_FIELD,
 _ESCAPE_IN_QUOTED_FIELD, _QUOTE_IN_QUOTED_FIELD, _EAT_CRNL,
 _AFTER_ESCAPED_CRNL) = range(9)

_NEWLINE_ERROR = ("new-line character seen in unquoted field - do you need to "
                  "open the file in universal-newline mode?")


class _Dialect:
    """What a reader or writer works by: the dialect's attributes, with the keyword
    arguments over them, checked as CPython checks them."""

    _defaults = (("delimiter", ","), ("doublequote", True), ("escapechar", None),
                 ("lineterminator", "\r\n"), ("quotechar", '"'),
                 ("quoting", _QUOTE_MINIMAL), ("skipinitialspace", False),
                 ("strict", False))

    def __init__(self, dialect, fmtparams):
        if isinstance(dialect, str):
            dialect = _csv.get_dialect(dialect)
        for name, default in self._defaults:
            value = fmtparams.pop(name) if name in fmtparams else getattr(dialect, name, default)
            object.__setattr__(self, name, value)
        if fmtparams:
            name = next(iter(fmtparams))
            raise TypeError(f"'{name}' is an invalid keyword argument for this function")
        self._check()

    def _check(self):
        for name in ("delimiter", "quotechar", "escapechar"):
            value = getattr(self, name)
            if name != "delimiter" and value is None:
                continue
            if not isinstance(value, str):
                kind = "string" if name == "delimiter" else "string or None"
                raise TypeError(f'"{name}" must be {kind}, not {type(value).__name__}')
            if len(value) != 1:
                raise TypeError(f'"{name}" must be a 1-character string')
        if type(self.quoting) is not int:
            raise TypeError('"quoting" must be an integer')
        if self.quoting not in range(6):
            raise TypeError('bad "quoting" value')
        if self.quotechar is None and self.quoting not in (_QUOTE_NONE, _QUOTE_MINIMAL):
            raise TypeError("quotechar must be set if quoting enabled")
        object.__setattr__(self, "doublequote", bool(self.doublequote))
        object.__setattr__(self, "skipinitialspace", bool(self.skipinitialspace))
        object.__setattr__(self, "strict", bool(self.strict))

    def __setattr__(self, name, value):
        raise AttributeError(f"attribute '{name}' of 'Dialect' objects is not writable")


class reader:
    """csv.reader(iterable, dialect='excel', **fmtparams): the rows of the
    lines `iterable` gives, each a list of fields."""

    def __init__(self, lines, dialect="excel", **fmtparams):
        self._lines = iter(lines)
        self.dialect = d = _Dialect(dialect, fmtparams)
        self.line_num = 0
        quote = d.quotechar if d.quoting != _QUOTE_NONE else None
        # What sends a line to the state machine: a quote, an escape, or a
        # line break before the line's end.
        self._special = tuple(c for c in (quote, d.escapechar, "\r", "\n") if c is not None)
        self._quote = quote
        # Spaces that start a field are skipped before they could delimit it.
        self._fast = not (d.skipinitialspace and d.delimiter == " ")
        # A field, its delimiter or the line's end: quoted with doubled quotes
        # inside, or unquoted with no quote, delimiter or line break.
        self._token = None
        if self._fast and quote is not None and d.escapechar is None and d.doublequote:
            q, sep = _re.escape(quote), _re.escape(d.delimiter)
            space = " *" if d.skipinitialspace else ""
            self._token = _re.compile(
                f"{space}(?:{q}((?:[^{q}]|{q}{q})*){q}|([^{sep}{q}\r\n]*))({sep}|\\Z)"
            )

    def __iter__(self):
        return self

    def __next__(self):
        d = self.dialect
        line = self._next_line()
        body = line.rstrip("\r\n")
        if self._fast and not any(c in body for c in self._special):
            return self._simple(body)
        if self._token is not None:
            row = self._quoted(body)
            if row is not None:
                return row
        return self._parse(line)

    def _next_line(self):
        line = next(self._lines)
        if not isinstance(line, str):
            raise _csv.Error("iterator should return strings, not %.200s (the file "
                             "should be opened in text mode)" % type(line).__name__)
        self.line_num += 1
        return line

    def _simple(self, body):
        """A line with nothing quoted, escaped or broken: its fields split."""
        d = self.dialect
        if not body:
            return []
        fields = body.split(d.delimiter)
        limit = _csv.field_size_limit()
        quoting = d.quoting
        row = []
        for field in fields:
            if d.skipinitialspace:
                field = field.lstrip(" ")
            if len(field) > limit:
                raise _csv.Error(f"field larger than field limit ({limit})")
            if not field and quoting in (_QUOTE_STRINGS, _QUOTE_NOTNULL):
                field = None
            elif field and quoting in (_QUOTE_NONNUMERIC, _QUOTE_STRINGS):
                field = float(field)
            row.append(field)
        return row

    def _quoted(self, body):
        """A line of well-formed fields, read by `_token`; None if it is not
        one (a quote left open, text after a closing quote, ...)."""
        d = self.dialect
        quote, quoting = self._quote, d.quoting
        doubled = quote + quote
        limit = _csv.field_size_limit()
        match, end = self._token.match, len(body)
        row, pos = [], 0
        while True:
            token = match(body, pos)
            if token is None:
                return None
            quoted, plain, delimiter = token.group(1, 2, 3)
            if quoted is not None:
                field = quoted.replace(doubled, quote) if doubled in quoted else quoted
            else:
                field = plain
            if len(field) > limit:
                raise _csv.Error(f"field larger than field limit ({limit})")
            if quoted is None and not plain and quoting in (_QUOTE_STRINGS, _QUOTE_NOTNULL):
                field = None
            elif quoted is None and plain and quoting in (_QUOTE_NONNUMERIC, _QUOTE_STRINGS):
                field = float(plain)
            row.append(field)
            pos = token.end()
            if not delimiter:
                return row if pos == end else None

    def _parse(self, line):
        """CPython's state machine over `line` and as many more lines as a
        quoted or escaped line break takes."""
        d = self.dialect
        delimiter, quote, escape = d.delimiter, self._quote, d.escapechar
        limit = _csv.field_size_limit()
        fields, field = [], []
        state = _START_RECORD
        unquoted = True

        def save():
            text = "".join(field)
            field.clear()
            if unquoted and not text and d.quoting in (_QUOTE_STRINGS, _QUOTE_NOTNULL):
                fields.append(None)
            elif unquoted and text and d.quoting in (_QUOTE_NONNUMERIC, _QUOTE_STRINGS):
                fields.append(float(text))
            else:
                fields.append(text)

        def add(c):
            if len(field) >= limit:
                raise _csv.Error(f"field larger than field limit ({limit})")
            field.append(c)

        while True:
            # `None` is the end of the line.
            for c in (*line, None):
                if state == _START_RECORD:
                    if c is None:
                        break
                    if c in "\r\n":
                        state = _EAT_CRNL
                        continue
                    state = _START_FIELD
                if state == _START_FIELD:
                    unquoted = True
                    if c is None or c in "\r\n":
                        save()
                        state = _START_RECORD if c is None else _EAT_CRNL
                    elif c == quote:
                        unquoted = False
                        state = _IN_QUOTED_FIELD
                    elif c == escape:
                        state = _ESCAPED_CHAR
                    elif c == " " and d.skipinitialspace:
                        pass
                    elif c == delimiter:
                        save()
                    else:
                        add(c)
                        state = _IN_FIELD
                elif state == _ESCAPED_CHAR:
                    if c is not None and c in "\r\n":
                        add(c)
                        state = _AFTER_ESCAPED_CRNL
                    else:
                        add("\n" if c is None else c)
                        state = _IN_FIELD
                elif state in (_IN_FIELD, _AFTER_ESCAPED_CRNL):
                    # After an escaped line break the record goes on past the
                    # line's end, until a delimiter, escape or line break
                    # changes the state (as in CPython, where the case falls
                    # through to IN_FIELD's without changing it).
                    if state == _AFTER_ESCAPED_CRNL and c is None:
                        continue
                    if c is None or c in "\r\n":
                        save()
                        state = _START_RECORD if c is None else _EAT_CRNL
                    elif c == escape:
                        state = _ESCAPED_CHAR
                    elif c == delimiter:
                        save()
                        state = _START_FIELD
                    else:
                        add(c)
                elif state == _IN_QUOTED_FIELD:
                    if c is None:
                        pass
                    elif c == escape:
                        state = _ESCAPE_IN_QUOTED_FIELD
                    elif c == quote:
                        state = _QUOTE_IN_QUOTED_FIELD if d.doublequote else _IN_FIELD
                    else:
                        add(c)
                elif state == _ESCAPE_IN_QUOTED_FIELD:
                    add("\n" if c is None else c)
                    state = _IN_QUOTED_FIELD
                elif state == _QUOTE_IN_QUOTED_FIELD:
                    if c is not None and c == quote:
                        add(c)
                        state = _IN_QUOTED_FIELD
                    elif c == delimiter:
                        save()
                        state = _START_FIELD
                    elif c is None or c in "\r\n":
                        save()
                        state = _START_RECORD if c is None else _EAT_CRNL
                    elif not d.strict:
                        add(c)
                        state = _IN_FIELD
                    else:
                        raise _csv.Error(f"'{delimiter}' expected after '{quote}'")
                elif state == _EAT_CRNL:
                    if c is None:
                        state = _START_RECORD
                    elif c not in "\r\n":
                        raise _csv.Error(_NEWLINE_ERROR)
            if state == _START_RECORD:
                return fields
            # The record goes on: a quoted or escaped line break.
            try:
                line = self._next_line()
            except StopIteration:
                if not field and state != _IN_QUOTED_FIELD:
                    raise
                if d.strict:
                    raise _csv.Error("unexpected end of data") from None
                save()
                return fields


class writer:
    """csv.writer(fileobj, dialect='excel', **fmtparams): writes rows to
    `fileobj` as delimited lines (CPython's `join_append` and `writerow`)."""

    def __init__(self, fileobj, dialect="excel", **fmtparams):
        self._write = getattr(fileobj, "write", None)
        if not callable(self._write):
            raise TypeError('argument 1 must have a "write" method')
        self.dialect = d = _Dialect(dialect, fmtparams)
        self._quote = d.quotechar if d.quoting != _QUOTE_NONE else None
        # The characters that make a field quoted or escaped.
        self._special = {c for c in (d.delimiter, d.escapechar, d.quotechar, *d.lineterminator) if c}

    def _join(self, parts, field, quoted):
        """Appends `field` (a str, or None for an empty one) to `parts`."""
        d = self.dialect
        out = []
        for c in field or "":
            if c in self._special:
                escape = False
                if d.quoting == _QUOTE_NONE:
                    escape = True
                else:
                    if c == d.quotechar:
                        if d.doublequote:
                            out.append(c)
                        else:
                            escape = True
                    elif c == d.escapechar:
                        escape = True
                    if not escape:
                        quoted = True
                if escape:
                    if d.escapechar is None:
                        raise _csv.Error("need to escape, but no escapechar set")
                    out.append(d.escapechar)
            out.append(c)
        text = "".join(out)
        if quoted:
            text = f"{self._quote}{text}{self._quote}"
        parts.append(text)

    def writerow(self, row):
        d = self.dialect
        try:
            fields = iter(row)
        except TypeError:
            raise _csv.Error(f"iterable expected, not {type(row).__name__}") from None
        parts = []
        for field in fields:
            if d.quoting == _QUOTE_NONNUMERIC:
                quoted = not _is_number(field)
            elif d.quoting == _QUOTE_ALL:
                quoted = True
            elif d.quoting == _QUOTE_STRINGS:
                quoted = isinstance(field, str)
            elif d.quoting == _QUOTE_NOTNULL:
                quoted = field is not None
            else:
                quoted = False
            if field is not None and not isinstance(field, str):
                field = str(field)
            self._join(parts, field, quoted)
        if len(parts) == 1 and not parts[0]:
            if d.quoting == _QUOTE_NONE:
                raise _csv.Error("single empty field record must be quoted")
            parts = []
            self._join(parts, None, True)
        return self._write(d.delimiter.join(parts) + d.lineterminator)

    def writerows(self, rows):
        for row in rows:
            self.writerow(row)


def _is_number(value):
    """What CPython's `PyNumber_Check` says: ints, floats, complex numbers,
    and anything with `__index__`, `__int__` or `__float__` (bools too)."""
    kind = type(value)
    return any(hasattr(kind, name) for name in ("__index__", "__int__", "__float__", "__complex__"))
