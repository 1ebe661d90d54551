# A pure-Python stand-in for CPython's `pyexpat` C module (the Expat XML parser
# behind `xml.parsers.expat`, `xml.etree.ElementTree`, `xml.dom.minidom`,
# `xml.sax` and `plistlib`). The prelude runs this file in an empty module
# named `pyexpat` and puts that module in `sys.modules`.
#
# RustPython's own `pyexpat` is not usable: it swallows exceptions raised in
# handlers and every parse error, starts a fresh parser on every `Parse` call
# (so data fed in chunks breaks), and passes attributes as a dict where
# ElementTree asks for a flat list, so `ElementTree.fromstring` returns an
# empty root. This port follows the XML 1.0 specification and the documented
# behaviour of CPython's pyexpat over Expat 2.x: the same handler calls with
# the same arguments, the same character-data buffering, the same errors
# (code, message, line and column) for the common malformations, and the
# same limits against entity expansion bombs.
#
# The tokenizer works on decoded text with compiled regular expressions that
# take a whole run of text, a whole tag with its attributes, a comment and so
# on in one step; elements and entities being expanded are kept on explicit
# stacks, so deep nesting does not recurse in Python. Input that is not yet
# complete (a tag cut by the end of a chunk) is kept for the next `Parse`.
#
# Not done: parameter entities are never expanded (an internal one in the
# internal subset is skipped, as Expat skips one it cannot read, and the
# declarations after it are ignored), so nothing external is ever read unless
# an ExternalEntityRefHandler parses it with ExternalEntityParserCreate; names
# take the XML 1.0 fifth-edition characters, not Expat's older tables.
#
# Run with only `sys`, `re` and `codecs`; it leaves `ParserCreate`,
# `ExpatError` and the rest of pyexpat's names in its globals, and registers
# `<name>.errors` and `<name>.model` in `sys.modules`.
# `tests/execute/python/compare_expat.py` compares it with CPython's pyexpat.

import sys
import re
import codecs

EXPAT_VERSION = "expat_2.6.0"
version_info = (2, 6, 0)
native_encoding = "UTF-8"
features = [("sizeof(XML_Char)", 1), ("sizeof(XML_LChar)", 1), ("XML_DTD", 0),
            ("XML_CONTEXT_BYTES", 1024), ("XML_NS", 0), ("XML_BLAP_MAX_AMP", 100),
            ("XML_BLAP_ACT_THRES", 8388608), ("XML_GE", 0)]
XML_PARAM_ENTITY_PARSING_NEVER = 0
XML_PARAM_ENTITY_PARSING_UNLESS_STANDALONE = 1
XML_PARAM_ENTITY_PARSING_ALWAYS = 2

# ---------------------------------------------------------------------------
# The `errors` and `model` submodules.

# Expat's error names and messages, by code (1 up).
_ERRORS = (
    ("NO_MEMORY", "out of memory"),
    ("SYNTAX", "syntax error"),
    ("NO_ELEMENTS", "no element found"),
    ("INVALID_TOKEN", "not well-formed (invalid token)"),
    ("UNCLOSED_TOKEN", "unclosed token"),
    ("PARTIAL_CHAR", "partial character"),
    ("TAG_MISMATCH", "mismatched tag"),
    ("DUPLICATE_ATTRIBUTE", "duplicate attribute"),
    ("JUNK_AFTER_DOC_ELEMENT", "junk after document element"),
    ("PARAM_ENTITY_REF", "illegal parameter entity reference"),
    ("UNDEFINED_ENTITY", "undefined entity"),
    ("RECURSIVE_ENTITY_REF", "recursive entity reference"),
    ("ASYNC_ENTITY", "asynchronous entity"),
    ("BAD_CHAR_REF", "reference to invalid character number"),
    ("BINARY_ENTITY_REF", "reference to binary entity"),
    ("ATTRIBUTE_EXTERNAL_ENTITY_REF", "reference to external entity in attribute"),
    ("MISPLACED_XML_PI", "XML or text declaration not at start of entity"),
    ("UNKNOWN_ENCODING", "unknown encoding"),
    ("INCORRECT_ENCODING", "encoding specified in XML declaration is incorrect"),
    ("UNCLOSED_CDATA_SECTION", "unclosed CDATA section"),
    ("EXTERNAL_ENTITY_HANDLING", "error in processing external entity reference"),
    ("NOT_STANDALONE", "document is not standalone"),
    ("UNEXPECTED_STATE", "unexpected parser state - please send a bug report"),
    ("ENTITY_DECLARED_IN_PE", "entity declared in parameter entity"),
    ("FEATURE_REQUIRES_XML_DTD", "requested feature requires XML_DTD support in Expat"),
    ("CANT_CHANGE_FEATURE_ONCE_PARSING", "cannot change setting once parsing has begun"),
    ("UNBOUND_PREFIX", "unbound prefix"),
    ("UNDECLARING_PREFIX", "must not undeclare prefix"),
    ("INCOMPLETE_PE", "incomplete markup in parameter entity"),
    ("XML_DECL", "XML declaration not well-formed"),
    ("TEXT_DECL", "text declaration not well-formed"),
    ("PUBLICID", "illegal character(s) in public id"),
    ("SUSPENDED", "parser suspended"),
    ("NOT_SUSPENDED", "parser not suspended"),
    ("ABORTED", "parsing aborted"),
    ("FINISHED", "parsing finished"),
    ("SUSPEND_PE", "cannot suspend in external parameter entity"),
    ("RESERVED_PREFIX_XML",
     "reserved prefix (xml) must not be undeclared or bound to another namespace name"),
    ("RESERVED_PREFIX_XMLNS", "reserved prefix (xmlns) must not be declared or undeclared"),
    ("RESERVED_NAMESPACE_URI",
     "prefix must not be bound to one of the reserved namespace names"),
    ("INVALID_ARGUMENT", "invalid argument"),
    ("NO_BUFFER", "a successful prior call to function XML_GetBuffer is required"),
    ("AMPLIFICATION_LIMIT_BREACH",
     "limit on input amplification factor (from DTD and entities) breached"),
)
(_E_SYNTAX, _E_NO_ELEMENTS, _E_INVALID, _E_UNCLOSED, _E_PARTIAL_CHAR, _E_MISMATCH,
 _E_DUP_ATTR, _E_JUNK, _E_PARAM_REF, _E_UNDEFINED, _E_RECURSIVE, _E_ASYNC, _E_BAD_CHAR,
 _E_BINARY, _E_ATTR_EXTERNAL, _E_MISPLACED, _E_UNKNOWN_ENC, _E_INCORRECT_ENC,
 _E_UNCLOSED_CDATA, _E_EXTERNAL, _E_NOT_STANDALONE) = range(2, 23)
_E_CANT_CHANGE, _E_UNBOUND, _E_UNDECLARING = 26, 27, 28
_E_XML_DECL, _E_TEXT_DECL, _E_PUBLICID, _E_FINISHED = 30, 31, 32, 36
_E_RESERVED_XML, _E_RESERVED_XMLNS, _E_RESERVED_URI, _E_AMPLIFICATION = 38, 39, 40, 43

errors = type(sys)(__name__ + ".errors")
errors.__doc__ = "Constants used to describe error conditions."
errors.codes = {}
errors.messages = {}
for _code, (_name, _message) in enumerate(_ERRORS, 1):
    setattr(errors, "XML_ERROR_" + _name, _message)
    errors.codes[_message] = _code
    errors.messages[_code] = _message

model = type(sys)(__name__ + ".model")
model.__doc__ = "Constants used to interpret content model information."
(model.XML_CTYPE_EMPTY, model.XML_CTYPE_ANY, model.XML_CTYPE_MIXED, model.XML_CTYPE_NAME,
 model.XML_CTYPE_CHOICE, model.XML_CTYPE_SEQ) = range(1, 7)
(model.XML_CQUANT_NONE, model.XML_CQUANT_OPT, model.XML_CQUANT_REP,
 model.XML_CQUANT_PLUS) = range(4)
sys.modules[errors.__name__] = errors
sys.modules[model.__name__] = model


def ErrorString(code):
    """Returns string error for given number."""
    return errors.messages.get(code)


class ExpatError(Exception):
    pass


ExpatError.__module__ = "xml.parsers.expat"
error = ExpatError

# ---------------------------------------------------------------------------
# Regular expressions. Names use the XML 1.0 (fifth edition) name characters
# of the Basic Multilingual Plane; Expat never takes characters beyond it in
# names.

_NS = ("A-Za-z_:\xc0-\xd6\xd8-\xf6\xf8-\u02ff\u0370-\u037d\u037f-\u1fff\u200c\u200d"
       "\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd")
_NC = _NS + "\\-.0-9\xb7\u0300-\u036f\u203f\u2040"
_NAME = "[" + _NS + "][" + _NC + "]*"
# Characters that may not appear in a document at all (lone surrogates cannot
# arrive: undecodable input turns into NULs, see `_bad_bytes`).
_BAD = "\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff"
_BAD_CHAR = re.compile("[" + _BAD + "]")

# Character data up to markup, a reference or a bad character.
_TEXT = re.compile("[^<&" + _BAD + "]+")
# A start tag with its attributes (values are checked by `_attr_value`).
_START = re.compile(
    "<(" + _NAME + ")((?:[ \t\r\n]+" + _NAME + "[ \t\r\n]*=[ \t\r\n]*(?:\"[^<\"" + _BAD + "]*\"|'[^<'" + _BAD + "]*'))*)"
    "[ \t\r\n]*(/?)>")
_ATTR = re.compile("(" + _NAME + ")[ \t\r\n]*=[ \t\r\n]*(?:\"([^\"]*)\"|'([^']*)')")
_END = re.compile("</(" + _NAME + ")[ \t\r\n]*>")
_REF = re.compile("&(?:(" + _NAME + ")|#([0-9]+)|#x([0-9a-fA-F]+));")
_COMMENT = re.compile("<!--((?:[^-" + _BAD + "]|-[^-" + _BAD + "])*)-->")
_PI = re.compile("<\\?(" + _NAME + ")(?:([ \t\r\n]+)((?:[^?" + _BAD + "]|\\?(?!>))*))?\\?>")
_CDATA_END = re.compile("[" + _BAD + "]|]]>")
_NEWLINES = re.compile("\r\n?")
# Pieces Expat reports separately when it does not buffer: runs, line ends.
_PIECES = re.compile("[^\r\n]+|\r\n?|\n")
# In a CDATA section Expat also starts a new piece at every "]".
_CDATA_PIECES = re.compile("\r\n?|\n|\\]?[^\\]\r\n]+|\\]")
_S = re.compile("[ \t\r\n]*")
_NAME_ONLY = re.compile(_NAME)
_NMTOKEN_CHARS = re.compile("[" + _NC + "]+")
# Attribute values: the characters to replace by a space, the references.
_ATTR_SPECIAL = re.compile("[\t\n\r&<]")
_ATTR_WS = re.compile("\r\n|[\t\n\r]")
# Prolog and DTD tokens (Expat reports each to the default handler).
_PROLOG = re.compile(
    "([ \t\r\n]+)"                              # 1 white space
    "|(<!--|<\\?)"                              # 2 comment or processing instruction
    "|<!([A-Za-z_:]+)"                          # 3 declaration
    "|(\"[^\"]*\"|'[^']*')"                     # 4 literal
    "|%(" + _NAME + ");"                        # 5 parameter-entity reference
    "|(%)(?=[ \t\r\n])"                         # 6 percent (parameter entity declaration)
    "|#(" + _NAME + ")"                         # 7 #PCDATA, #REQUIRED, ...
    "|([" + _NC + "]+)([?*+]?)"                 # 8 name or name token, 9 its quantifier
    "|(\\)[?*+]?)"                              # 10 closing parenthesis
    "|([(|,\\[\\]>])"                           # 11 one-character token
    "|(<)(?=[" + _NS + "])"                     # 12 the document element begins
    "|(<!\\[)")                                 # 13 conditional section
_XML_DECL = re.compile(
    "<\\?xml([ \t\r\n]+version[ \t\r\n]*=[ \t\r\n]*(?:\"([-A-Za-z0-9_.:]+)\"|'([-A-Za-z0-9_.:]+)'))?"
    "(?:([ \t\r\n]+encoding[ \t\r\n]*=[ \t\r\n]*)(?:\"([A-Za-z][-A-Za-z0-9._]*)\"|'([A-Za-z][-A-Za-z0-9._]*)'))?"
    "(?:[ \t\r\n]+standalone[ \t\r\n]*=[ \t\r\n]*(?:\"(yes|no)\"|'(yes|no)'))?"
    "[ \t\r\n]*\\?>")
# What may follow a literal, a name, a #name or a ")" in the prolog (Expat's
# tokenizer refuses anything else there).
_FOLLOW = {3: " \t\r\n%", 4: " \t\r\n>%[", 8: " \t\r\n>),|[%", 7: " \t\r\n)>%|",
           10: " \t\r\n>,|)"}
# A token the end of the document cuts short.
_PARTIAL_PROLOG = re.compile("(?:<!?[" + _NC + "]*|<!-?|<!\\[|\"[^\"]*|'[^']*|%[" + _NC + "]*)$")
_PUBID_CHARS = re.compile("[-'()+,./:=?;!*#@$_%a-zA-Z0-9 \r\n]*")

_PREDEFINED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}
_XML_NS = "http://www.w3.org/XML/1998/namespace"
_XMLNS_NS = "http://www.w3.org/2000/xmlns/"
_AMP_THRESHOLD, _AMP_FACTOR = 8388608, 100.0

_HANDLERS = (
    "StartElementHandler", "EndElementHandler", "ProcessingInstructionHandler",
    "CharacterDataHandler", "UnparsedEntityDeclHandler", "NotationDeclHandler",
    "StartNamespaceDeclHandler", "EndNamespaceDeclHandler", "CommentHandler",
    "StartCdataSectionHandler", "EndCdataSectionHandler", "DefaultHandler",
    "DefaultHandlerExpand", "NotStandaloneHandler", "ExternalEntityRefHandler",
    "StartDoctypeDeclHandler", "EndDoctypeDeclHandler", "EntityDeclHandler",
    "XmlDeclHandler", "ElementDeclHandler", "AttlistDeclHandler", "SkippedEntityHandler")


def _bad_bytes(exc):
    # Undecodable bytes become NULs, one per byte: NUL is never allowed in a
    # document, so the tokenizer reports an invalid token there, as Expat
    # does, and byte counts stay right.
    return "\x00" * (exc.end - exc.start), exc.end


try:
    codecs.register_error("expat_port.bad", _bad_bytes)
    _ERRORS_MODE = "expat_port.bad"
except Exception:
    _ERRORS_MODE = "replace"

# Expat's built-in encodings: name → (Python codec, bytes per unit, converts).
# "Converts" means Expat hands character data over in pieces of at most 1024
# bytes of UTF-8, as it converts them into its internal UTF-8.
_BUILTIN_ENCODINGS = {
    "UTF-8": ("utf-8", 1, False), "US-ASCII": ("ascii", 1, False),
    "ISO-8859-1": ("latin-1", 1, True), "UTF-16": ("utf-16", 2, True),
    "UTF-16BE": ("utf-16-be", 2, True), "UTF-16LE": ("utf-16-le", 2, True),
}


class _Entity:
    __slots__ = ("name", "text", "systemId", "publicId", "notation", "base", "open",
                 "is_param")

    def __init__(self, name, text, systemId=None, publicId=None, notation=None, base=None,
                 is_param=False):
        self.name, self.text, self.systemId, self.publicId = name, text, systemId, publicId
        self.notation, self.base, self.open, self.is_param = notation, base, False, is_param


class _Stop(Exception):
    """Raised inside the parser to stop with an Expat error."""

    def __init__(self, code, pos=None):
        self.code, self.pos = code, pos


class _Dtd:
    """What the document type declaration defined; shared with the parsers
    made by ExternalEntityParserCreate."""

    def __init__(self):
        self.entities = {}
        self.params = {}
        self.defaults = {}       # element name → [(attribute name, default value)]
        self.has_param_refs = False
        self.standalone = False
        self.keep_processing = True


class XMLParserType:
    """XML parser"""

    def __init__(self, encoding=None, namespace_separator=None, intern=None, _parent=None):
        d = self.__dict__
        for name in _HANDLERS:
            d[name] = None
        d["_cdh"] = None          # the character data handler in force
        d["_dh"] = None           # the default handler in force
        d["_dh_expand"] = False   # whether it is DefaultHandlerExpand
        d["_text"] = None         # buffered character data (a list) when buffer_text
        d["_used"] = 0
        d["_bsize"] = 8192
        d["ordered_attributes"] = False
        d["specified_attributes"] = False
        d["namespace_prefixes"] = False
        d["intern"] = intern
        d["_encoding_arg"] = encoding
        d["_sep"] = namespace_separator
        d["_ns"] = namespace_separator is not None
        d["_base"] = None
        d["_param_parsing"] = 0
        d["_foreign_dtd"] = False
        d["_reparse_deferral"] = True
        d["_started"] = False
        d["_finished"] = False
        d["_error"] = None
        d["_in_callback"] = 0
        # Input: pending raw bytes, the decoder, the decoded text not consumed.
        d["_raw"] = b""
        d["_decoder"] = None
        d["_codec"] = None
        d["_width"] = 1
        d["_utf8"] = True
        d["_convert"] = False
        d["_str_input"] = False
        d["_buf"] = ""
        d["_pos"] = 0
        d["_ev"] = 0
        d["_total"] = 0           # characters of input seen
        # Where the start of `_buf` is: line, column, byte, and whether it
        # follows a carriage return (so a line feed there continues a line end).
        d["_ck"] = 0
        d["_ck_line"] = 1
        d["_ck_col"] = 0
        d["_ck_byte"] = 0
        d["_ck_cr"] = False
        d["_bom"] = 0
        d["_err_pos"] = None
        # Structure.
        d["_state"] = 0           # 0 prolog start, 1 prolog, 2 content, 3 epilog
        d["_role"] = None         # state of the DTD declaration being read
        d["_decl"] = None
        d["_stack"] = []          # open elements: (qualified name, reported name, bindings)
        d["_frames"] = []         # internal entities being expanded
        d["_bindings"] = {"xml": _XML_NS}
        d["_default_ns"] = None
        d["_dtd"] = _Dtd() if _parent is None else _parent._dtd
        d["_doctype"] = None
        d["_saw_doctype"] = False
        d["_direct"] = 0
        d["_indirect"] = 0
        d["_cdata"] = False
        d["_entity_mode"] = None  # for external entity parsers: "content" or "dtd"
        d["_standalone"] = -1

    # -- handler attributes with side effects -------------------------------

    def __setattr__(self, name, value):
        d = self.__dict__
        if name == "CharacterDataHandler":
            if d["_text"]:
                self._flush()
            d[name] = value
            d["_cdh"] = value
        elif name == "DefaultHandler" or name == "DefaultHandlerExpand":
            d[name] = value
            d["_dh"] = value
            d["_dh_expand"] = name == "DefaultHandlerExpand"
        elif name in ("buffer_text", "buffer_size", "ordered_attributes", "specified_attributes",
                      "namespace_prefixes"):
            self._set_option(name, value)
        elif name in ("intern", "CurrentLineNumber", "CurrentColumnNumber", "CurrentByteIndex",
                      "ErrorCode", "ErrorLineNumber", "ErrorColumnNumber", "ErrorByteIndex",
                      "buffer_used"):
            raise AttributeError(f"attribute '{name}' of 'xmlparser' objects is not writable")
        elif name in d and name[:1] != "_" or name in _HANDLERS:
            d[name] = value
        else:
            raise AttributeError(f"'xmlparser' object has no attribute '{name}'")

    def _set_option(self, name, value):
        d = self.__dict__
        if name == "buffer_text":
            on = bool(value)
            if on and d["_text"] is None:
                d["_text"] = []
                d["_used"] = 0
            elif not on and d["_text"] is not None:
                self._flush()
                d["_text"] = None
        elif name == "buffer_size":
            if not isinstance(value, int):
                raise TypeError("buffer_size must be an integer")
            if value <= 0:
                raise ValueError("buffer_size must be greater than zero")
            if d["_text"]:
                self._flush()
            d["_bsize"] = value
        else:
            d[name] = bool(value)

    @property
    def buffer_text(self):
        return self._text is not None

    @property
    def buffer_size(self):
        return self._bsize

    @property
    def buffer_used(self):
        return self._used

    @property
    def CurrentLineNumber(self):
        return self._position(self._ev)[0]

    @property
    def CurrentColumnNumber(self):
        return self._position(self._ev)[1]

    @property
    def CurrentByteIndex(self):
        if not self._started or (self._total == 0):
            return -1
        return self._position(self._ev)[2]

    @property
    def ErrorCode(self):
        return self._error or 0

    @property
    def ErrorLineNumber(self):
        return self._error_position()[0]

    @property
    def ErrorColumnNumber(self):
        return self._error_position()[1]

    @property
    def ErrorByteIndex(self):
        return self._error_position()[2]

    def _error_position(self):
        if self._err_pos is not None:
            return self._err_pos
        return self._position(self._ev) if self._total else (1, 0, -1)

    # -- positions ---------------------------------------------------------

    def _blen(self, s):
        """Bytes the text `s` took in the input."""
        if self._width == 1:
            if not self._utf8 or s.isascii():
                return len(s)
            return len(s.encode("utf-8", "surrogatepass"))
        return len(s.encode("utf-16-le", "surrogatepass"))

    def _advance(self, p):
        """Moves the line/column/byte checkpoint forward to `p` in `_buf`."""
        d = self.__dict__
        ck = d["_ck"]
        if p <= ck:
            return
        seg = d["_buf"][ck:p]
        lines = seg.count("\n") + seg.count("\r") - seg.count("\r\n")
        cont = d["_ck_cr"] and seg[0] == "\n"
        if cont:
            lines -= 1
        if lines or cont:
            last = max(seg.rfind("\n"), seg.rfind("\r"))
            d["_ck_col"] = len(seg) - last - 1
        else:
            d["_ck_col"] += len(seg)
        d["_ck_line"] += lines
        d["_ck_byte"] += self._blen(seg)
        d["_ck_cr"] = seg[-1] == "\r"
        d["_ck"] = p

    def _position(self, p):
        if p < self._ck:
            p = self._ck
        self._advance(p)
        return self._ck_line, self._ck_col, self._ck_byte + self._bom

    # -- settings ------------------------------------------------------------

    def SetBase(self, base):
        self.__dict__["_base"] = base

    def GetBase(self):
        return self._base

    def GetInputContext(self):
        if not self._in_callback:
            return None
        rest = self._buf[self._ev:]
        try:
            return rest.encode(self._codec or "utf-8", "surrogatepass")
        except Exception:
            return rest.encode("utf-8", "surrogatepass")

    def SetParamEntityParsing(self, flag):
        if self._started:
            return 0
        self.__dict__["_param_parsing"] = flag
        return 1

    def UseForeignDTD(self, flag=True):
        if self._started:
            raise self._make_error(_E_CANT_CHANGE, (1, 0, -1))
        self.__dict__["_foreign_dtd"] = bool(flag)

    def GetReparseDeferralEnabled(self):
        return self._reparse_deferral

    def SetReparseDeferralEnabled(self, enabled):
        self.__dict__["_reparse_deferral"] = bool(enabled)

    def ExternalEntityParserCreate(self, context, encoding=None):
        child = XMLParserType(encoding, self._sep, self.intern, _parent=self)
        d = child.__dict__
        for name in _HANDLERS:
            d[name] = self.__dict__[name]
        for name in ("_cdh", "_dh", "_dh_expand", "ordered_attributes", "specified_attributes",
                     "namespace_prefixes", "_base", "_param_parsing"):
            d[name] = self.__dict__[name]
        if self._text is not None:
            d["_text"] = []
        d["_bsize"] = self._bsize
        d["_bindings"] = dict(self._bindings)
        d["_default_ns"] = self._default_ns
        d["_entity_mode"] = "dtd" if context is None else "content"
        d["_state"] = 0
        if context is None:
            d["_role"] = "subset"
        return child

    # -- feeding -------------------------------------------------------------

    def ParseFile(self, file):
        read = file.read
        while True:
            data = read(2048)
            if not isinstance(data, (bytes, bytearray, str)):
                raise TypeError("read() did not return a bytes object (type=%.400s)"
                                % type(data).__name__)
            if not data:
                break
            self.Parse(data, False)
        return self.Parse(b"", True)

    def Parse(self, data, isfinal=False):
        d = self.__dict__
        if d["_error"] is not None:
            raise self._make_error(d["_error"], self._error_position())
        if d["_finished"]:
            d["_error"] = _E_FINISHED
            d["_err_pos"] = self._position(d["_ev"])
            raise self._make_error(_E_FINISHED, d["_err_pos"])
        d["_started"] = True
        try:
            if isinstance(data, str):
                if not d["_str_input"] and d["_decoder"] is None and not d["_raw"]:
                    d["_str_input"] = True
                    self._set_codec("utf-8", 1, False)
                if d["_decoder"] is not None and d["_codec"] != "utf-8":
                    data = data.encode("utf-8")
                    text = self._decode(data, isfinal)
                else:
                    text = data
                    if isfinal and d["_decoder"] is not None:
                        text += self._decode(b"", True)
            else:
                text = self._decode(bytes(data), isfinal)
            if text:
                pos = d["_pos"]
                if pos:
                    self._advance(pos)
                    d["_buf"] = d["_buf"][pos:] + text
                    d["_ck"] -= pos
                    d["_ev"] -= pos
                    d["_pos"] = 0
                else:
                    d["_buf"] += text
                d["_total"] += len(text)
                d["_direct"] += len(text)
            self._run(isfinal)
        except _Stop as stop:
            d["_text"] = [] if d["_text"] is not None else None
            d["_used"] = 0
            d["_error"] = stop.code
            if stop.pos is not None:
                d["_ev"] = stop.pos
            d["_err_pos"] = self._error_position_now(stop)
            raise self._make_error(stop.code, d["_err_pos"]) from None
        except BaseException:
            d["_error"] = d["_error"] or 35   # parsing aborted
            d["_err_pos"] = self._position(d["_ev"])
            raise
        if d["_text"]:
            self._flush()
        if isfinal:
            d["_finished"] = True
        return 1

    def _error_position_now(self, stop):
        if stop.code == _E_NO_ELEMENTS and self._total == 0:
            return (1, 0, -1)
        return self._position(self._ev)

    def _make_error(self, code, where):
        line, col = where[0], where[1]
        err = ExpatError(f"{errors.messages[code]}: line {line}, column {col}")
        err.code, err.lineno, err.offset = code, line, col
        return err

    # -- decoding ------------------------------------------------------------

    def _set_codec(self, codec, width, convert, bom=0):
        d = self.__dict__
        d["_codec"] = codec
        d["_width"] = width
        d["_utf8"] = codec == "utf-8"
        d["_convert"] = convert
        d["_bom"] = bom
        d["_decoder"] = codecs.getincrementaldecoder(codec)(_ERRORS_MODE)

    def _decode(self, data, final):
        d = self.__dict__
        if d["_decoder"] is None:
            d["_raw"] += data
            raw = d["_raw"]
            if not self._choose_encoding(raw, final):
                return ""
            data = raw
            d["_raw"] = b""
            if d["_decl_split"] is not None:
                # The XML declaration was read in the family encoding; the
                # rest is in the declared one.
                head, data = data[:d["_decl_split"]], data[d["_decl_split"]:]
                head = head.decode(d["_head_codec"], _ERRORS_MODE)
                return head + d["_decoder"].decode(data, final)
        return d["_decoder"].decode(data, final)

    def _choose_encoding(self, raw, final):
        """Picks the input encoding from the protocol encoding, a byte order
        mark, the first bytes or the XML declaration; False while it needs
        more bytes."""
        d = self.__dict__
        d["_decl_split"] = None
        forced = d["_encoding_arg"]
        if len(raw) < 4 and not final:
            return False
        bom = 0
        if raw[:2] in (b"\xfe\xff", b"\xff\xfe") and (forced is None or
                                                     forced.upper() == "UTF-16"):
            family = ("utf-16-be" if raw[:2] == b"\xfe\xff" else "utf-16-le", 2)
            bom = 1
        elif raw[:3] == b"\xef\xbb\xbf" and (forced is None or forced.upper() == "UTF-8"):
            family = ("utf-8", 1)
            bom = 1
        elif forced is not None:
            return self._use_encoding(forced, None)
        elif raw[:4] == b"\x00<\x00?" or raw[:2] == b"\x00<":
            family = ("utf-16-be", 2)
        elif raw[:4] == b"<\x00?\x00" or raw[:2] == b"<\x00":
            family = ("utf-16-le", 2)
        else:
            family = ("utf-8", 1)
        # Look for an encoding in the XML declaration (the byte order mark,
        # when there is one, stays in the text as U+FEFF).
        if family[1] == 2:
            head = raw.decode(family[0], "replace")
        else:
            head = ("\ufeff" if bom else "") + raw[3 * bom:].decode("latin-1")
        if forced is None and not final and len(head) < bom + 6 and \
                "<?xml".startswith(head[bom:bom + 5]):
            return False
        if forced is None and head.startswith("<?xml", bom) and (
                len(head) == bom + 5 or head[bom + 5] in " \t\r\n?"):
            end = head.find("?>")
            if end < 0:
                if not final and len(head) < 4096:
                    return False
            else:
                m = _XML_DECL.match(head, bom, end + 2)
                if m and (m.group(5) or m.group(6)):
                    name = m.group(5) or m.group(6)
                    where = m.end(4) + 1
                    if not self._use_encoding(name, family, where):
                        return True
                    if family[1] == 1:
                        # Bytes of the declaration, read as Latin-1 (ASCII).
                        d["_decl_split"] = end + 2 + 2 * bom
                        d["_head_codec"] = "utf-8" if bom else "latin-1"
                        if bom and self._width == 1 and not self._utf8:
                            d["_bom"] = 2    # the mark's 3 bytes are 1 character
                    return True
        if family[1] == 2:
            self._set_codec(family[0], 2, True)
        else:
            self._set_codec("utf-8", 1, False)
        return True

    def _use_encoding(self, name, family, where=None):
        """Switches to the encoding `name`, as Expat would; records an error
        (raised once the tokenizer reaches the declaration) when it cannot."""
        key = name.upper()
        builtin = _BUILTIN_ENCODINGS.get(key)
        if builtin is not None:
            codec, width, convert = builtin
            if family is not None:
                if width != family[1] or (width == 2 and key != "UTF-16" and
                                          codec != family[0]):
                    self._set_codec(family[0], family[1], family[1] == 2)
                    self.__dict__["_enc_error"] = (_E_INCORRECT_ENC, where)
                    return False
                if key == "UTF-16":
                    codec = family[0]
            elif codec == "utf-16":
                codec = "utf-16-le"
            self._set_codec(codec, width, convert)
            return True
        # Like pyexpat's handler for other encodings: any Python codec that
        # maps each byte to one character. Its errors are Python's.
        table = None
        try:
            chars = bytes(range(256)).decode(name, "replace")
            if len(chars) == 256:
                table = chars
            else:
                problem = ValueError("multi-byte encodings are not supported")
        except Exception as exc:
            problem = exc
        if table is None or family is not None and family[1] == 2:
            if family is None:
                self._set_codec("utf-8", 1, False)
            else:
                self._set_codec(family[0], family[1], family[1] == 2)
            if table is not None:
                problem = (_E_INCORRECT_ENC, where)
            self.__dict__["_enc_error"] = problem
            return False
        self._set_codec("latin-1", 1, True)
        mapping = {i: (c if c != "\ufffd" else "\x00") for i, c in enumerate(table)
                   if chr(i) != c}
        self.__dict__["_decoder"] = _TableDecoder(mapping)
        self.__dict__["_codec"] = name
        return True

    # -- character data --------------------------------------------------

    def _flush(self):
        d = self.__dict__
        parts = d["_text"]
        if parts:
            data = "".join(parts) if len(parts) > 1 else parts[0]
            parts.clear()
            d["_used"] = 0
            h = d["_cdh"]
            if h is not None:
                d["_in_callback"] += 1
                try:
                    h(data)
                finally:
                    d["_in_callback"] -= 1

    def _call(self, handler, *args):
        d = self.__dict__
        if d["_text"]:
            self._flush()
        d["_in_callback"] += 1
        try:
            return handler(*args)
        finally:
            d["_in_callback"] -= 1

    def _chars(self, raw, pieces_re=_PIECES):
        """Reports the character data `raw` (line ends not yet normalised) to
        the character data handler, or else to the default handler."""
        d = self.__dict__
        h = d["_cdh"]
        if h is None:
            dh = d["_dh"]
            if dh is not None:
                for piece in self._pieces(raw, pieces_re):
                    self._call(dh, piece)
            return
        parts = d["_text"]
        if parts is not None:
            text = _NEWLINES.sub("\n", raw) if "\r" in raw else raw
            n = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
            if d["_used"] + n <= d["_bsize"] and not (d["_convert"] and n > 1024):
                parts.append(text)
                d["_used"] += n
                return
        for piece in self._pieces(raw, pieces_re):
            if piece[0] == "\r":
                piece = "\n"
            self._char_piece(piece)

    def _pieces(self, raw, pieces_re):
        for piece in pieces_re.findall(raw):
            if self._convert and len(piece) > 256:
                # Expat converts into a 1024-byte buffer, handing each over.
                data = piece.encode("utf-8", "surrogatepass")
                i = 0
                while i < len(data):
                    j = min(i + 1024, len(data))
                    while j < len(data) and 0x80 <= data[j] < 0xC0:
                        j -= 1
                    yield data[i:j].decode("utf-8", "surrogatepass")
                    i = j
            else:
                yield piece

    def _char_piece(self, piece):
        """pyexpat's buffering of one piece of character data."""
        d = self.__dict__
        parts = d["_text"]
        if parts is None:
            h = d["_cdh"]
            if h is not None:
                d["_in_callback"] += 1
                try:
                    h(piece)
                finally:
                    d["_in_callback"] -= 1
            return
        n = len(piece) if piece.isascii() else len(piece.encode("utf-8", "surrogatepass"))
        if d["_used"] + n > d["_bsize"]:
            self._flush()
            if d["_cdh"] is None:
                return
            parts = d["_text"]
            if parts is None:
                return self._char_piece(piece)
        if n > d["_bsize"]:
            h = d["_cdh"]
            d["_in_callback"] += 1
            try:
                h(piece)
            finally:
                d["_in_callback"] -= 1
            d["_used"] = 0
        else:
            parts.append(piece)
            d["_used"] += n

    def _default(self, text):
        dh = self.__dict__["_dh"]
        if dh is not None:
            self._call(dh, text)

    def _intern(self, s):
        table = self.__dict__["intern"]
        if table is None:
            return s
        return table.setdefault(s, s)

    # -- the driver ----------------------------------------------------------

    def _run(self, final):
        d = self.__dict__
        enc_error = d.pop("_enc_error", None)
        while True:
            state = d["_state"]
            if state == 0 and d["_entity_mode"] is None:
                if not self._xml_decl(final, enc_error):
                    return
                d["_state"] = 1
                continue
            if state == 0:
                if not self._text_decl(final):
                    return
                if d["_entity_mode"] == "content":
                    d["_state"] = 2
                    d["_stack"] = []
                    d["_base_level"] = 0
                else:
                    d["_state"] = 1
                continue
            if state == 1:
                if not self._prolog(final):
                    return
                continue
            if state == 2:
                if not self._content(final):
                    return
                continue
            if state == 3:
                self._epilog(final)
                return

    def _xml_decl(self, final, enc_error):
        """Reads the XML declaration, if any, at the start of the document."""
        d = self.__dict__
        buf, pos = d["_buf"], d["_pos"]
        if pos == 0 and buf[:1] == "\ufeff":
            # A byte order mark in a str: Expat sees its UTF-8 bytes and skips them.
            d["_pos"] = pos = 1
        rest = buf[pos:pos + 6]
        if len(rest) < 6 and not final and "<?xml".startswith(rest[:5]):
            return False
        if not (rest.startswith("<?xml") and len(rest) == 6 and rest[5] in " \t\r\n?"):
            if isinstance(enc_error, tuple):
                raise _Stop(enc_error[0], enc_error[1])
            if enc_error is not None:
                raise enc_error
            return True
        end = buf.find("?>", pos)
        if end < 0:
            if not final:
                return False
            raise _Stop(_E_UNCLOSED, pos)
        m = _XML_DECL.match(buf, pos, end + 2)
        d["_ev"] = pos
        if not m or not (m.group(2) or m.group(3)):
            raise _Stop(_E_XML_DECL, self._xml_decl_error(buf, pos, end))
        version = m.group(2) or m.group(3)
        encoding = m.group(5) or m.group(6)
        sa = m.group(7) or m.group(8)
        standalone = -1 if sa is None else int(sa == "yes")
        d["_standalone"] = standalone
        if standalone == 1:
            d["_dtd"].standalone = True
            if d["_param_parsing"] == XML_PARAM_ENTITY_PARSING_UNLESS_STANDALONE:
                d["_param_parsing"] = 0
        d["_pos"] = m.end()
        h = d["XmlDeclHandler"]
        if h is not None:
            self._call(h, version, encoding, standalone)
        else:
            self._default(buf[pos:m.end()])
        if isinstance(enc_error, tuple):
            raise _Stop(enc_error[0], enc_error[1] or pos)
        if enc_error is not None:
            raise enc_error
        return True

    def _xml_decl_error(self, buf, pos, end):
        """Where Expat finds an XML declaration wrong: it reads each
        pseudo-attribute (name up to "=", quoted value of letters, digits,
        ".", "-", "_"), then checks the names, their order and values."""
        i = pos + 5
        order = ["version", "encoding", "standalone"]
        while True:
            j = _S.match(buf, i).end()
            if j >= end:
                return j
            if j == i and i != pos + 5:
                return j
            k = j
            while k < end and buf[k] != "=" and buf[k] not in " \t\r\n":
                if ord(buf[k]) > 127:
                    return k
                k += 1
            name = buf[j:k]
            if k < end and buf[k] != "=":
                k = _S.match(buf, k).end()
                if k >= end or buf[k] != "=":
                    return k
            k = _S.match(buf, k + 1).end()
            if k >= end or buf[k] not in "\"'":
                return k
            quote = buf[k]
            v = k + 1
            e = v
            while e < end and buf[e] != quote:
                c = buf[e]
                if not (c.isascii() and (c.isalnum() or c in "._-")):
                    return e
                e += 1
            if e >= end:
                return e
            value = buf[v:e]
            if name not in order or len(order) == 3 and name != "version":
                return j
            order = order[order.index(name) + 1:]
            if name == "version" and not value:
                return v
            if name == "encoding" and not (value[:1].isascii() and value[:1].isalpha()):
                return v
            if name == "standalone" and value not in ("yes", "no"):
                return v
            i = e + 1
            if i < end and buf[i] not in " \t\r\n":
                return i

    def _text_decl(self, final):
        """External entities may begin with a text declaration."""
        d = self.__dict__
        buf, pos = d["_buf"], d["_pos"]
        if buf[pos:pos + 1] == "\ufeff":
            d["_pos"] = pos = pos + 1
        rest = buf[pos:pos + 6]
        if len(rest) < 6 and not final and "<?xml".startswith(rest[:5]):
            return False
        if not (rest.startswith("<?xml") and len(rest) == 6 and rest[5] in " \t\r\n"):
            return True
        end = buf.find("?>", pos)
        if end < 0:
            if not final:
                return False
            raise _Stop(_E_UNCLOSED, pos)
        m = _XML_DECL.match(buf, pos, end + 2)
        if not m or not (m.group(5) or m.group(6)) or m.group(7) or m.group(8):
            raise _Stop(_E_TEXT_DECL, pos)
        d["_pos"] = m.end()
        h = d["XmlDeclHandler"]
        if h is not None:
            self._call(h, m.group(2) or m.group(3), m.group(5) or m.group(6), -1)
        else:
            self._default(buf[pos:m.end()])
        return True

    # -- content -------------------------------------------------------------

    def _content(self, final):
        """Reads content from `_pos` on: returns False when it needs more
        input, True when the document element has ended."""
        d = self.__dict__
        buf, pos = d["_buf"], d["_pos"]
        end = len(buf)
        frames = d["_frames"]
        stack = d["_stack"]
        top = not frames          # reading the document itself (not an entity)
        text_match = _TEXT.match
        entity_mode = d["_entity_mode"] == "content"
        if d["_cdata"]:
            d["_ev"] = pos
            pos = self._cdata_section(buf, pos, end, final, True, True)
            if pos is None:
                return False
        while True:
            if pos >= end:
                if frames:
                    # The end of an internal entity's replacement text.
                    entity, level, buf, pos, end = frames.pop()
                    entity.open = False
                    if len(stack) != level:
                        if top:
                            d["_ev"] = pos
                        raise _Stop(_E_ASYNC)
                    top = not frames
                    continue
                d["_pos"] = pos
                if not final:
                    return False
                if entity_mode:
                    if stack:
                        d["_ev"] = pos
                        raise _Stop(_E_ASYNC if False else _E_NO_ELEMENTS)
                    return self._finish_entity()
                d["_ev"] = pos
                raise _Stop(_E_NO_ELEMENTS)
            c = buf[pos]
            if c == "<":
                c2 = buf[pos + 1:pos + 2]
                if c2 == "/":
                    m = _END.match(buf, pos)
                    if m is None:
                        if top:
                            d["_ev"] = pos
                        if _cut(self._tag_error(buf, pos, end, top), final, top):
                            d["_pos"] = pos
                            return False
                        raise _Stop(*self._tag_error(buf, pos, end, top))
                    if top:
                        d["_ev"] = pos
                    qname = m.group(1)
                    if not stack or stack[-1][0] != qname or (frames and len(stack) <= frames[-1][1]):
                        if frames and stack and len(stack) <= frames[-1][1]:
                            raise _Stop(_E_ASYNC)
                        raise _Stop(_E_MISMATCH, pos + 2 if top else None)
                    pos = m.end()
                    self._end_element(stack.pop(), m.group(0))
                    if not stack and not entity_mode:
                        d["_pos"] = pos
                        d["_state"] = 3
                        return True
                    continue
                if c2 == "!":
                    if buf.startswith("<!--", pos):
                        m = _COMMENT.match(buf, pos)
                        if top:
                            d["_ev"] = pos
                        if m is None:
                            if _cut(self._comment_error(buf, pos, end, top), final, top):
                                d["_pos"] = pos
                                return False
                            raise _Stop(*self._comment_error(buf, pos, end, top))
                        pos = m.end()
                        h = d["CommentHandler"]
                        if h is not None:
                            data = m.group(1)
                            if "\r" in data:
                                data = _NEWLINES.sub("\n", data)
                            self._call(h, data)
                        elif d["_dh"] is not None:
                            self._default(m.group(0))
                        continue
                    if buf.startswith("<![CDATA[", pos):
                        if top:
                            d["_ev"] = pos
                        r = self._cdata_section(buf, pos, end, final, top)
                        if r is None:
                            return False
                        pos = r
                        continue
                    if top:
                        d["_ev"] = pos
                    if not final and len(buf) - pos < 9 and ("<![CDATA[".startswith(buf[pos:]) or
                                                             "<!--".startswith(buf[pos:])):
                        d["_pos"] = pos
                        return False
                    if end - pos < 9 and ("<![CDATA[".startswith(buf[pos:end]) or
                                          "<!--".startswith(buf[pos:end])):
                        raise _Stop(_E_UNCLOSED if top else _E_INVALID, pos)
                    # At the first character that departs from "<![CDATA[" or "<!--".
                    want = "<![CDATA[" if buf.startswith("<![", pos) else "<!--"
                    bad = pos + 2
                    while bad < end and bad - pos < len(want) and buf[bad] == want[bad - pos]:
                        bad += 1
                    raise _Stop(_E_INVALID, bad if top else None)
                if c2 == "?":
                    if top:
                        d["_ev"] = pos
                    r = self._pi(buf, pos, end, final, top)
                    if r is None:
                        d["_pos"] = pos
                        return False
                    pos = r
                    continue
                m = _START.match(buf, pos)
                if m is None:
                    if top:
                        d["_ev"] = pos
                    if _cut(self._tag_error(buf, pos, end, top), final, top):
                        d["_pos"] = pos
                        return False
                    raise _Stop(*self._tag_error(buf, pos, end, top))
                if top:
                    d["_ev"] = pos
                pos = m.end()
                d["_pos"] = pos
                entry = self._start_element(m, buf, top)
                if m.group(3):
                    if top:
                        d["_ev"] = pos
                    self._end_element(entry)
                    if not stack and not entity_mode:
                        d["_state"] = 3
                        return True
                else:
                    stack.append(entry)
                if d["_frames"] is not frames or d["_buf"] is not buf and top:
                    pass
                continue
            if c == "&":
                m = _REF.match(buf, pos)
                if top:
                    d["_ev"] = pos
                if m is None:
                    if _cut(self._ref_error(buf, pos, end, top), final, top):
                        d["_pos"] = pos
                        return False
                    raise _Stop(*self._ref_error(buf, pos, end, top))
                name = m.group(1)
                if name is None:
                    ch = self._char_ref(m, top, pos)
                    pos = m.end()
                    if d["_cdh"] is not None:
                        self._char_piece(ch)
                    elif d["_dh"] is not None:
                        self._default(m.group(0))
                    continue
                if ":" in name and d["_ns"]:
                    raise _Stop(_E_INVALID, pos + 1 + name.index(":") if top else None)
                pos = m.end()
                ch = _PREDEFINED.get(name)
                if ch is not None:
                    if d["_cdh"] is not None:
                        self._char_piece(ch)
                    elif d["_dh"] is not None:
                        self._default(m.group(0))
                    continue
                entity = self._entity_ref(name, m.group(0), top)
                if entity is not None:
                    # Expand an internal entity: read its text as content.
                    frames.append((entity, len(stack), buf, pos, end))
                    entity.open = True
                    buf, pos, end = entity.text, 0, len(entity.text)
                    top = False
                continue
            # Character data.
            m = text_match(buf, pos)
            if m is None:
                if top:
                    d["_ev"] = pos
                raise _Stop(_E_INVALID, pos)
            stop = m.end()
            if stop == end and top and not final:
                # Keep a line end or "]" that may go on in the next chunk.
                while stop > pos and buf[stop - 1] in "\r]":
                    stop -= 1
                if stop == pos:
                    d["_pos"] = pos
                    return False
            raw = buf[pos:stop]
            if "]]>" in raw:
                bad = raw.find("]]>")
                # Expat reports the text before the line end the "]]>" is on.
                nl = max(raw.rfind("\n", 0, bad), raw.rfind("\r", 0, bad))
                if nl >= 0:
                    if top:
                        d["_ev"] = pos
                    self._chars(raw[:nl + 1])
                    nlpos = pos + nl + 1
                    if top:
                        d["_ev"] = nlpos
                raise _Stop(_E_INVALID, pos + bad + 2)
            if top:
                d["_ev"] = pos
            pos = stop
            if d["_cdh"] is not None and d["_text"] is not None and "\r" not in raw:
                # The common case, inlined: buffered text.
                n = len(raw) if raw.isascii() else len(raw.encode("utf-8", "surrogatepass"))
                if d["_used"] + n <= d["_bsize"] and not (d["_convert"] and n > 1024):
                    d["_text"].append(raw)
                    d["_used"] += n
                    continue
            if top:
                # Piece by piece, each at its own position.
                base = stop - len(raw)
                for mm in _PIECES.finditer(raw):
                    d["_ev"] = base + mm.start()
                    self._chars(mm.group(0))
            else:
                self._chars(raw)

    def _finish_entity(self):
        d = self.__dict__
        d["_state"] = 3
        return True

    def _char_ref(self, m, top, pos):
        digits = m.group(2)
        try:
            n = int(digits) if digits is not None else int(m.group(3), 16)
        except ValueError:
            n = -1
        if not (n == 9 or n == 10 or n == 13 or 0x20 <= n <= 0xd7ff or 0xe000 <= n <= 0xfffd
                or 0x10000 <= n <= 0x10ffff):
            raise _Stop(_E_BAD_CHAR, pos if top else None)
        return chr(n)

    def _entity_ref(self, name, text, top):
        """Handles a reference to a general entity in content; returns the
        entity when its text is to be read as content."""
        d = self.__dict__
        dtd = d["_dtd"]
        entity = dtd.entities.get(name)
        if not dtd.has_param_refs or dtd.standalone:
            if entity is None:
                raise _Stop(_E_UNDEFINED)
        elif entity is None:
            h = d["SkippedEntityHandler"]
            if h is not None:
                self._call(h, name, 0)
            elif d["_dh"] is not None:
                self._default(text)
            return None
        if entity.open:
            raise _Stop(_E_RECURSIVE)
        if entity.notation is not None:
            raise _Stop(_E_BINARY)
        if entity.text is not None:
            if not d["_dh_expand"] and d["_dh"] is not None:
                h = d["SkippedEntityHandler"]
                if h is not None:
                    self._call(h, name, 0)
                else:
                    self._default(text)
                return None
            self._account(len(entity.text))
            return entity
        h = d["ExternalEntityRefHandler"]
        if h is not None:
            entity.open = True
            try:
                context = self._context()
            finally:
                entity.open = False
            rc = self._call(h, context, entity.base, entity.systemId, entity.publicId)
            if not _as_int(rc):
                raise _Stop(_E_EXTERNAL)
        elif d["_dh"] is not None:
            self._default(text)
        return None

    def _context(self):
        """Expat's context string for an external entity parser."""
        parts = []
        if self._ns:
            if self._default_ns:
                parts.append("=" + self._default_ns)
            for prefix, uri in self._bindings.items():
                if uri:
                    parts.append(prefix + "=" + uri)
        for entity in self._dtd.entities.values():
            if entity.open:
                parts.append(entity.name)
        return "\f".join(parts)

    def _account(self, n):
        """Expat's protection against entity expansion bombs."""
        d = self.__dict__
        d["_indirect"] += n
        total = d["_direct"] + d["_indirect"]
        if total >= _AMP_THRESHOLD and total > _AMP_FACTOR * max(d["_direct"], 1):
            raise _Stop(_E_AMPLIFICATION)

    def _cdata_section(self, buf, pos, end, final, top, begun=False):
        """Reads a CDATA section from its "<![CDATA[" (or, when `begun`, the
        rest of one cut by the end of a chunk); returns where it ends, or
        None when it needs more input (what there is has been reported)."""
        d = self.__dict__
        if not begun:
            self._cdata_begin(buf, pos)
            pos += 9
        start = pos
        m = _CDATA_END.search(buf, start)
        if m is not None and m.group(0) != "]]>":
            # A character not allowed: report what comes before it.
            bad = m.start()
            self._cdata_text(buf, start, bad, top)
            raise _Stop(_E_INVALID, bad if top else None)
        if m is None:
            stop = end
            if top and not final:
                # Report what there is; keep a "]" or line end that may go on.
                while stop > start and buf[stop - 1] in "\r]":
                    stop -= 1
                self._cdata_text(buf, start, stop, top)
                d["_cdata"] = True
                d["_pos"] = stop
                return None
            self._cdata_text(buf, start, stop, top)
            if top:
                d["_ev"] = end
            raise _Stop(_E_UNCLOSED_CDATA if top else _E_INVALID)
        d["_cdata"] = False
        stop = m.start()
        self._cdata_text(buf, start, stop, top)
        if top:
            d["_ev"] = stop
        h = d["EndCdataSectionHandler"]
        if h is not None:
            self._call(h)
        elif d["_dh"] is not None:
            self._default("]]>")
        return stop + 3

    def _cdata_text(self, buf, start, stop, top):
        if stop <= start:
            return
        d = self.__dict__
        if not top:
            self._chars(buf[start:stop], _CDATA_PIECES)
            return
        for mm in _CDATA_PIECES.finditer(buf, start, stop):
            d["_ev"] = mm.start()
            self._chars(mm.group(0), _CDATA_PIECES)

    def _cdata_begin(self, buf, pos):
        d = self.__dict__
        h = d["StartCdataSectionHandler"]
        if h is not None:
            self._call(h)
        elif d["_dh"] is not None:
            self._default("<![CDATA[")

    def _pi(self, buf, pos, end, final, top):
        d = self.__dict__
        m = _PI.match(buf, pos)
        if m is None:
            if _cut(self._pi_error(buf, pos, end, top), final, top):
                return None
            raise _Stop(*self._pi_error(buf, pos, end, top))
        target = m.group(1)
        if ":" in target and d["_ns"]:
            raise _Stop(_E_INVALID, pos + 2 + target.index(":") if top else None)
        if target.lower() == "xml":
            if target == "xml":
                raise _Stop(_E_MISPLACED, pos if top else None)
            raise _Stop(_E_INVALID, (pos + 5) if top else None)
        h = d["ProcessingInstructionHandler"]
        if h is not None:
            data = m.group(3) or ""
            if "\r" in data:
                data = _NEWLINES.sub("\n", data)
            self._call(h, self._intern(target), data)
        elif d["_dh"] is not None:
            self._default(m.group(0))
        return m.end()

    # -- elements --------------------------------------------------------

    def _attr_value(self, value, vstart, tagpos, depth=0):
        """Normalises an attribute value: white space to spaces, references
        replaced."""
        d = self.__dict__
        out = []
        i = 0
        n = len(value)
        dtd = d["_dtd"]
        while i < n:
            m = _ATTR_SPECIAL.search(value, i)
            if m is None:
                out.append(value[i:])
                break
            j = m.start()
            out.append(value[i:j])
            c = value[j]
            if c == "<":
                raise _Stop(_E_INVALID, None if vstart is None else vstart + j)
            if c != "&":
                if c == "\r" and value[j + 1:j + 2] == "\n":
                    j += 1
                out.append(" ")
                i = j + 1
                continue
            r = _REF.match(value, j)
            if r is None:
                bad = self._ref_error(value, j, len(value), True)[1]
                raise _Stop(_E_INVALID, None if vstart is None else vstart + bad)
            i = r.end()
            name = r.group(1)
            if name is None:
                out.append(self._char_ref(r, vstart is not None,
                                          None if vstart is None else vstart + j))
                continue
            if ":" in name and d["_ns"]:
                raise _Stop(_E_INVALID, None if vstart is None else vstart + j + 1 + name.index(":"))
            ch = _PREDEFINED.get(name)
            if ch is not None:
                out.append(ch)
                continue
            entity = dtd.entities.get(name)
            where = tagpos
            if not dtd.has_param_refs or dtd.standalone:
                if entity is None:
                    raise _Stop(_E_UNDEFINED, where)
            elif entity is None:
                continue
            if vstart is not None:
                where = vstart + j
            if entity.open:
                raise _Stop(_E_RECURSIVE, where)
            if entity.notation is not None:
                raise _Stop(_E_BINARY, where)
            if entity.text is None:
                raise _Stop(_E_ATTR_EXTERNAL, where)
            self._account(len(entity.text))
            entity.open = True
            try:
                out.append(self._attr_value(entity.text, None, tagpos, depth + 1))
            finally:
                entity.open = False
        return "".join(out)

    def _start_element(self, m, buf, top):
        d = self.__dict__
        qname = m.group(1)
        tagpos = m.start() if top else None
        ns = d["_ns"]
        if ns and ":" in qname:
            self._check_qname(qname, m.start(1), top)
        attrs = []
        bindings = [] if ns else None
        text = m.group(2)
        seen = None
        if text and "&" in text:
            # Expat's tokenizer checks every reference of the tag first.
            base = m.start(2)
            i = text.find("&")
            while i >= 0:
                r = _REF.match(text, i)
                if r is None:
                    bad = self._ref_error(text, i, len(text), True)[1]
                    raise _Stop(_E_INVALID, base + bad if top else None)
                if ns and r.group(1) and ":" in r.group(1):
                    bad = i + 1 + r.group(1).index(":")
                    raise _Stop(_E_INVALID, base + bad if top else None)
                i = text.find("&", r.end())
        try:
            if text:
                # In document order, as Expat: the duplicate check, the value,
                # then (with namespaces) the declaration it makes.
                base = m.start(2)
                for am in _ATTR.finditer(text):
                    name = am.group(1)
                    apos = base + am.start()
                    if seen is None:
                        seen = {name}
                    elif name in seen:
                        raise _Stop(_E_DUP_ATTR, apos if top else None)
                    else:
                        seen.add(name)
                    if ns and ":" in name:
                        self._check_qname(name, apos, top)
                    value = am.group(2)
                    vgroup = 2
                    if value is None:
                        value = am.group(3)
                        vgroup = 3
                    if _ATTR_SPECIAL.search(value) is not None:
                        value = self._attr_value(value, base + am.start(vgroup) if top else None,
                                                 tagpos)
                    if ns and name[:5] == "xmlns" and (len(name) == 5 or name[5] == ":"):
                        self._bind(name, value, tagpos, bindings)
                    else:
                        attrs.append((name, value, apos))
            nspecified = len(attrs)
            defaults = d["_dtd"].defaults.get(qname)
            if defaults:
                for name, value in defaults:
                    if seen is None or name not in seen:
                        if ns and name[:5] == "xmlns" and (len(name) == 5 or name[5] == ":"):
                            self._bind(name, value, tagpos, bindings)
                        else:
                            attrs.append((name, value, None))
            if ns:
                name, attrs = self._expand(qname, attrs, tagpos)
            else:
                name = qname
        except _Stop:
            # Expat undoes (and reports) the declarations of an empty
            # element's tag when its tag fails; a start tag's stay.
            if bindings and m.group(3):
                self._unbind(bindings)
            raise
        table = d["intern"]
        if table is not None:
            name = table.setdefault(name, name)
        h = d["StartElementHandler"]
        if h is not None:
            if d["_text"]:
                self._flush()
            if d["specified_attributes"]:
                attrs = attrs[:nspecified]
            if d["ordered_attributes"]:
                container = []
                for a in attrs:
                    n = a[0]
                    if table is not None:
                        n = table.setdefault(n, n)
                    container.append(n)
                    container.append(a[1])
            else:
                container = {}
                for a in attrs:
                    n = a[0]
                    if table is not None:
                        n = table.setdefault(n, n)
                    container[n] = a[1]
            d["_in_callback"] += 1
            try:
                h(name, container)
            finally:
                d["_in_callback"] -= 1
        elif d["_dh"] is not None:
            self._default(m.group(0))
        return (qname, name, bindings or None)

    def _end_element(self, entry, text=None):
        d = self.__dict__
        h = d["EndElementHandler"]
        if h is not None:
            if d["_text"]:
                self._flush()
            d["_in_callback"] += 1
            try:
                h(entry[1])
            finally:
                d["_in_callback"] -= 1
        elif text is not None and d["_dh"] is not None:
            self._default(text)
        if entry[2]:
            self._unbind(entry[2])

    def _unbind(self, bindings):
        """Undoes namespace declarations, last first, reporting each."""
        d = self.__dict__
        for prefix, old in reversed(bindings):
            if prefix is None:
                d["_default_ns"] = old
            elif old is None:
                del d["_bindings"][prefix]
            else:
                d["_bindings"][prefix] = old
            h = d["EndNamespaceDeclHandler"]
            if h is not None:
                self._call(h, prefix)

    def _check_qname(self, name, where, top):
        """With namespaces, a name has at most one colon, inside it."""
        if name[0] == ":":
            raise _Stop(_E_INVALID, where if top else None)
        first = name.index(":")
        second = name.find(":", first + 1)
        if second >= 0:
            raise _Stop(_E_INVALID, where + second if top else None)
        if first == len(name) - 1:
            raise _Stop(_E_INVALID, where + len(name) if top else None)

    def _bind(self, aname, uri, tagpos, bindings):
        """Makes the namespace declaration of the attribute `aname`."""
        d = self.__dict__
        prefix = aname[6:] if len(aname) > 5 else None
        if prefix == "xmlns":
            raise _Stop(_E_RESERVED_XMLNS, tagpos)
        if prefix == "xml":
            if uri != _XML_NS:
                raise _Stop(_E_RESERVED_XML, tagpos)
        elif uri == _XML_NS or uri == _XMLNS_NS:
            raise _Stop(_E_RESERVED_URI, tagpos)
        if prefix is not None and not uri:
            raise _Stop(_E_UNDECLARING, tagpos)
        if d["_sep"] and d["_sep"] in uri:
            # Expat refuses a namespace name holding the separator.
            raise _Stop(_E_SYNTAX, tagpos)
        if prefix is None:
            bindings.append((None, d["_default_ns"]))
            d["_default_ns"] = uri or None
        else:
            bindings.append((prefix, d["_bindings"].get(prefix)))
            d["_bindings"][prefix] = uri
        h = d["StartNamespaceDeclHandler"]
        if h is not None:
            self._call(h, prefix, uri or None)

    def _expand(self, qname, rest, tagpos):
        """Expanded names for the element and its attributes."""
        d = self.__dict__
        sep = d["_sep"]
        prefixes = d["namespace_prefixes"]
        out = []
        if rest:
            seen = None
            for a in rest:
                aname = a[0]
                colon = aname.find(":")
                if colon > 0:
                    prefix = aname[:colon]
                    uri = d["_bindings"].get(prefix)
                    if uri is None:
                        raise _Stop(_E_UNBOUND, tagpos)
                    expanded = uri + sep + aname[colon + 1:]
                    if seen is None:
                        seen = set(b[0] for b in rest if ":" not in b[0])
                    if expanded in seen:
                        raise _Stop(_E_DUP_ATTR, tagpos)
                    seen.add(expanded)
                    if prefixes:
                        expanded += sep + prefix
                    out.append((expanded, a[1], a[2]))
                else:
                    out.append(a)
        colon = qname.find(":")
        if colon > 0:
            prefix = qname[:colon]
            uri = d["_bindings"].get(prefix)
            if uri is None:
                raise _Stop(_E_UNBOUND, tagpos)
            name = uri + sep + qname[colon + 1:]
            if prefixes:
                name += sep + prefix
        elif d["_default_ns"]:
            name = d["_default_ns"] + sep + qname
        else:
            name = qname
        return name, out

    # -- error diagnosis -----------------------------------------------------

    def _tag_error(self, buf, pos, end, top):
        """Where a tag that the fast pattern refused goes wrong, as Expat's
        tokenizer would find it: (error code, position)."""
        where = (lambda p: p) if top else (lambda p: None)
        i = pos + 1
        closing = buf.startswith("/", i)
        if closing:
            i += 1
        m = _NAME_ONLY.match(buf, i)
        if m is None:
            if i >= end:
                return _E_UNCLOSED, where(pos)
            return _E_INVALID, where(i)
        if m.end() >= end:
            return _E_UNCLOSED, where(pos)
        if self._ns and ":" in m.group(0):
            try:
                self._check_qname(m.group(0), i, True)
            except _Stop as stop:
                return _E_INVALID, where(stop.pos)
        i = m.end()
        if closing:
            i = _S.match(buf, i).end()
            if i >= end:
                return _E_UNCLOSED, where(pos)
            return _E_INVALID, where(i)
        while True:
            j = _S.match(buf, i).end()
            if j >= end:
                return _E_UNCLOSED, where(pos)
            c = buf[j]
            if c == ">":
                return _E_INVALID, where(j)
            if c == "/":
                if j + 1 >= end:
                    return _E_UNCLOSED, where(pos)
                return _E_INVALID, where(j + 1)
            if j == i:
                return _E_INVALID, where(j)
            m = _NAME_ONLY.match(buf, j)
            if m is None:
                return _E_INVALID, where(j)
            if m.end() >= end:
                return _E_UNCLOSED, where(pos)
            if self._ns and ":" in m.group(0):
                try:
                    self._check_qname(m.group(0), j, True)
                except _Stop as stop:
                    return _E_INVALID, where(stop.pos)
            k = _S.match(buf, m.end()).end()
            if k >= end:
                return _E_UNCLOSED, where(pos)
            if buf[k] != "=":
                return _E_INVALID, where(k)
            k = _S.match(buf, k + 1).end()
            if k >= end:
                return _E_UNCLOSED, where(pos)
            q = buf[k]
            if q != '"' and q != "'":
                return _E_INVALID, where(k)
            k += 1
            while k < end and buf[k] != q:
                if buf[k] == "<" or _BAD_CHAR.match(buf[k]):
                    return _E_INVALID, where(k)
                if buf[k] == "&" and _REF.match(buf, k) is None:
                    code, bad = self._ref_error(buf, k, end, True)
                    if code == _E_UNCLOSED:
                        return _E_UNCLOSED, where(pos)
                    return code, where(bad)
                k += 1
            if k >= end:
                return _E_UNCLOSED, where(pos)
            i = k + 1
            if i < end and buf[i] not in " \t\r\n/>":
                return _E_INVALID, where(i)

    def _ref_error(self, buf, pos, end, top):
        where = (lambda p: p) if top else (lambda p: None)
        i = pos + 1
        if i >= end:
            return _E_UNCLOSED, where(pos)
        if buf[i] == "#":
            i += 1
            if i < end and buf[i] == "x":
                i += 1
                m = re.compile("[0-9a-fA-F]*").match(buf, i)
            else:
                m = re.compile("[0-9]*").match(buf, i)
            j = m.end()
            if j >= end:
                return _E_UNCLOSED, where(pos)
            return _E_INVALID, where(j)
        m = _NAME_ONLY.match(buf, i)
        if m is None:
            return _E_INVALID, where(i)
        if self._ns and ":" in m.group(0):
            # With namespaces Expat's references stop at a colon.
            return _E_INVALID, where(i + m.group(0).index(":"))
        if m.end() >= end:
            return _E_UNCLOSED, where(pos)
        return _E_INVALID, where(m.end())

    def _comment_error(self, buf, pos, end, top):
        where = (lambda p: p) if top else (lambda p: None)
        i = pos + 4
        while i < end:
            c = buf[i]
            if c == "-":
                if i + 1 >= end:
                    break
                if buf[i + 1] == "-":
                    if i + 2 >= end:
                        break
                    return _E_INVALID, where(i + 2)
            elif _BAD_CHAR.match(c):
                return _E_INVALID, where(i)
            i += 1
        return _E_UNCLOSED, where(pos)

    def _pi_error(self, buf, pos, end, top):
        where = (lambda p: p) if top else (lambda p: None)
        m = _NAME_ONLY.match(buf, pos + 2)
        if m is None:
            if pos + 2 >= end:
                return _E_UNCLOSED, where(pos)
            return _E_INVALID, where(pos + 2)
        i = m.end()
        if i >= end:
            return _E_UNCLOSED, where(pos)
        c = buf[i]
        if c == "?":
            if i + 1 >= end:
                return _E_UNCLOSED, where(pos)
            return _E_INVALID, where(i + 1)
        if c not in " \t\r\n":
            return _E_INVALID, where(i)
        while i < end:
            if _BAD_CHAR.match(buf[i]):
                return _E_INVALID, where(i)
            i += 1
        return _E_UNCLOSED, where(pos)

    # -- after the document element ------------------------------------------

    def _epilog(self, final):
        d = self.__dict__
        buf, pos = d["_buf"], d["_pos"]
        end = len(buf)
        while pos < end:
            d["_ev"] = pos
            c = buf[pos]
            if c in " \t\r\n":
                m = _S.match(buf, pos)
                stop = m.end()
                if stop == end and not final and buf[stop - 1] == "\r":
                    stop -= 1
                    if stop == pos:
                        break
                self._default(buf[pos:stop])
                pos = stop
                continue
            if buf.startswith("<!--", pos):
                m = _COMMENT.match(buf, pos)
                if m is None:
                    if _cut(self._comment_error(buf, pos, end, True), final, True):
                        break
                    raise _Stop(*self._comment_error(buf, pos, end, True))
                pos = m.end()
                h = d["CommentHandler"]
                if h is not None:
                    self._call(h, _NEWLINES.sub("\n", m.group(1)))
                else:
                    self._default(m.group(0))
                continue
            if buf.startswith("<?", pos):
                r = self._pi(buf, pos, end, final, True)
                if r is None:
                    break
                pos = r
                continue
            if not final and end - pos < 4 and ("<!--".startswith(buf[pos:]) or buf[pos:] == "<"):
                break
            if c == "<" and pos + 1 < end and buf[pos + 1] not in "!?" and \
                    _NAME_ONLY.match(buf, pos + 1) is None:
                raise _Stop(_E_INVALID, pos + 1)
            if c not in "<&" and _TEXT.match(buf, pos) is None:
                raise _Stop(_E_INVALID, pos)
            raise _Stop(_E_JUNK, pos)
        d["_pos"] = pos
        d["_ev"] = pos

    # -- the prolog and the document type declaration ------------------------

    def _prolog(self, final):
        """Reads the prolog (and the internal subset) token by token; returns
        True when the document element begins, False for more input."""
        d = self.__dict__
        buf = d["_buf"]
        end = len(buf)
        while True:
            pos = d["_pos"]
            if pos >= end:
                if not final:
                    return False
                d["_ev"] = pos
                if d["_entity_mode"] == "dtd":
                    if d["_role"] not in ("subset",):
                        raise _Stop(_E_SYNTAX if d["_role"] else _E_NO_ELEMENTS)
                    d["_state"] = 3
                    return True
                raise _Stop(_E_NO_ELEMENTS)
            d["_ev"] = pos
            m = _PROLOG.match(buf, pos)
            if m is None:
                c = buf[pos]
                if not final:
                    # Perhaps cut by the end of the chunk; the final call tells.
                    return False
                if _PARTIAL_PROLOG.match(buf, pos):
                    raise _Stop(_E_UNCLOSED, pos)
                if c == "<" and pos + 1 < end and buf[pos + 1] == "!" and pos + 2 < end:
                    raise _Stop(_E_INVALID, pos + 2)
                if c == "<" and pos + 1 < end:
                    raise _Stop(_E_INVALID, pos + 1)
                if c in "\"'":
                    if not final:
                        return False
                    raise _Stop(_E_UNCLOSED, pos)
                if c == "<" or c == "%" and pos + 1 >= end:
                    if not final:
                        return False
                    raise _Stop(_E_UNCLOSED if c == "%" else _E_NO_ELEMENTS, pos)
                raise _Stop(_E_INVALID, pos)
            kind = m.lastindex
            if kind == 9:
                kind = 8
            if m.end() == end and not final and kind in (1, 3, 7, 8, 10, 12):
                # A token that may go on in the next chunk.
                if kind != 1 or buf[end - 1] == "\r":
                    return False
            follow = _FOLLOW.get(kind)
            if follow is not None and (kind != 8 or not m.group(9)):
                stop = m.end()
                if stop >= end:
                    if not final:
                        return False
                    if kind == 3:
                        raise _Stop(_E_UNCLOSED, pos)
                elif buf[stop] not in follow:
                    raise _Stop(_E_INVALID, stop)
            if kind == 2:
                r = self._prolog_markup(buf, pos, end, final)
                if r is None:
                    return False
                d["_pos"] = r
                continue
            if kind == 3 and d["_ns"] and ":" in m.group(3):
                raise _Stop(_E_INVALID, pos + 2 + m.group(3).index(":"))
            if kind == 12:
                if d["_role"] is not None or d["_entity_mode"] == "dtd":
                    raise _Stop(_E_SYNTAX, pos)
                self._instance_start()
                d["_state"] = 2
                return True
            if kind == 13:
                raise _Stop(_E_SYNTAX if d["_role"] != "subset" else _E_INVALID,
                            pos if d["_role"] != "subset" else pos + 2)
            d["_pos"] = m.end()
            self._prolog_token(kind, m, buf, pos)

    def _prolog_markup(self, buf, pos, end, final):
        """A comment or processing instruction in the prolog or DTD."""
        d = self.__dict__
        if d["_role"] not in (None, "subset"):
            raise _Stop(_E_SYNTAX, pos)
        if buf.startswith("<!--", pos):
            m = _COMMENT.match(buf, pos)
            if m is None:
                if _cut(self._comment_error(buf, pos, end, True), final, True):
                    return None
                raise _Stop(*self._comment_error(buf, pos, end, True))
            h = d["CommentHandler"]
            if h is not None:
                self._call(h, _NEWLINES.sub("\n", m.group(1)))
            else:
                self._default(m.group(0))
            return m.end()
        return self._pi(buf, pos, end, final, True)

    def _instance_start(self):
        d = self.__dict__
        dtd = d["_dtd"]
        if d["_foreign_dtd"] and not d["_saw_doctype"]:
            d["_foreign_dtd"] = False
            dtd.has_param_refs = True
            h = d["ExternalEntityRefHandler"]
            if d["_param_parsing"] and h is not None:
                rc = self._call(h, None, d["_base"], None, None)
                if not _as_int(rc):
                    raise _Stop(_E_EXTERNAL)

    def _prolog_token(self, kind, m, buf, pos):
        """Feeds one prolog token to the declaration grammar."""
        d = self.__dict__
        text = m.group(0)
        role = d["_role"]
        if kind == 1 and role is None:
            self._default(text)
            return
        if role is None:
            # In the prolog itself: only a DOCTYPE may come.
            if kind == 3 and m.group(3) == "DOCTYPE" and not d["_saw_doctype"] and \
                    d["_entity_mode"] is None:
                d["_saw_doctype"] = True
                d["_role"] = "dt_name"
                d["_decl"] = {"name": None, "sysid": None, "pubid": None, "handled": False}
                if d["StartDoctypeDeclHandler"] is None:
                    self._default(text)
                return
            raise _Stop(_E_SYNTAX, pos)
        if kind == 1:
            if role == "subset" or not self._suppressed(role):
                self._default(text)
            return
        handled = getattr(self, "_role_" + role)(kind, m, text, pos)
        if not handled and not self._suppressed(d["_role"] if role == "subset" else role):
            self._default(text)

    def _suppressed(self, role):
        """Whether the tokens of the declaration being read stay away from
        the default handler because a handler for the declaration is set."""
        d = self.__dict__
        if role is None or role == "subset":
            return False
        if role[:2] == "dt":
            return d["StartDoctypeDeclHandler"] is not None
        if role[:3] == "ent":
            return d["_dtd"].keep_processing and d["EntityDeclHandler"] is not None
        if role[:2] == "el":
            return d["ElementDeclHandler"] is not None
        if role[:3] == "att":
            return d["_dtd"].keep_processing and d["AttlistDeclHandler"] is not None
        return d["NotationDeclHandler"] is not None

    # The DOCTYPE declaration.

    def _role_dt_name(self, kind, m, text, pos):
        if kind != 8 or m.group(9) or not _NAME_ONLY.fullmatch(text):
            raise _Stop(_E_SYNTAX, pos)
        decl = self._decl
        decl["name"] = text
        self.__dict__["_role"] = "dt_after_name"
        if self.StartDoctypeDeclHandler is not None:
            decl["handled"] = True
            return True
        return False

    def _role_dt_after_name(self, kind, m, text, pos):
        d = self.__dict__
        if kind == 8 and text == "SYSTEM":
            d["_role"] = "dt_sysid"
            return d["_decl"]["handled"]
        if kind == 8 and text == "PUBLIC":
            d["_role"] = "dt_pubid"
            return d["_decl"]["handled"]
        return self._role_dt_after_id(kind, m, text, pos)

    def _role_dt_pubid(self, kind, m, text, pos):
        if kind != 4:
            raise _Stop(_E_SYNTAX, pos)
        value = text[1:-1]
        if not _PUBID_CHARS.fullmatch(value):
            raise _Stop(_E_PUBLICID, pos)
        self._decl["pubid"] = " ".join(value.split())
        self.__dict__["_role"] = "dt_sysid"
        return self.StartDoctypeDeclHandler is not None

    def _role_dt_sysid(self, kind, m, text, pos):
        d = self.__dict__
        if kind != 4:
            raise _Stop(_E_SYNTAX, pos)
        d["_decl"]["sysid"] = text[1:-1]
        d["_role"] = "dt_after_id"
        dtd = d["_dtd"]
        dtd.has_param_refs = True
        handled = self.StartDoctypeDeclHandler is not None
        h = d["NotStandaloneHandler"]
        if not dtd.standalone and not d["_param_parsing"] and h is not None:
            if not _as_int(self._call(h)):
                raise _Stop(_E_NOT_STANDALONE)
        return handled

    def _role_dt_after_id(self, kind, m, text, pos):
        d = self.__dict__
        decl = d["_decl"]
        if kind == 11 and text == "[":
            d["_role"] = "subset"
            d["_doctype"] = decl
            h = d["StartDoctypeDeclHandler"]
            if h is not None:
                self._call(h, self._intern(decl["name"]), decl["sysid"], decl["pubid"], 1)
                return True
            return False
        if kind == 11 and text == ">":
            handled = False
            h = d["StartDoctypeDeclHandler"]
            if h is not None:
                self._call(h, self._intern(decl["name"]), decl["sysid"], decl["pubid"], 0)
                handled = True
            d["_role"] = None
            return self._doctype_close(decl) or handled
        raise _Stop(_E_SYNTAX, pos)

    def _doctype_close(self, decl):
        d = self.__dict__
        dtd = d["_dtd"]
        if decl["sysid"] is not None or d["_foreign_dtd"]:
            dtd.has_param_refs = True
            h = d["ExternalEntityRefHandler"]
            if d["_param_parsing"] and h is not None:
                rc = self._call(h, None, d["_base"], decl["sysid"], decl["pubid"])
                if not _as_int(rc):
                    raise _Stop(_E_EXTERNAL)
            d["_foreign_dtd"] = False
        h = d["EndDoctypeDeclHandler"]
        if h is not None:
            self._call(h)
            return True
        return False

    def _role_dt_close(self, kind, m, text, pos):
        d = self.__dict__
        if kind == 11 and text == ">":
            d["_role"] = None
            return self._doctype_close(d["_doctype"])
        raise _Stop(_E_SYNTAX, pos)

    def _role_subset(self, kind, m, text, pos):
        d = self.__dict__
        if kind == 11 and text == "]":
            if d["_entity_mode"] == "dtd":
                raise _Stop(_E_SYNTAX, pos)
            d["_role"] = "dt_close"
            return False
        if kind == 5:
            # A parameter-entity reference. Internal subset only: external
            # ones are read only by an ExternalEntityRefHandler, internal ones
            # are not expanded (the declarations after it are then ignored,
            # as Expat ignores them when it cannot read the reference).
            dtd = d["_dtd"]
            dtd.has_param_refs = True
            handled = False
            if not d["_param_parsing"]:
                dtd.keep_processing = dtd.standalone
            else:
                name = m.group(5)
                entity = dtd.params.get(name)
                if entity is None:
                    if dtd.standalone:
                        raise _Stop(_E_UNDEFINED, pos)
                    dtd.keep_processing = dtd.standalone
                    h = d["SkippedEntityHandler"]
                    if h is not None:
                        self._call(h, name, 1)
                        handled = True
                    return handled
                if entity.open:
                    raise _Stop(_E_RECURSIVE, pos)
                h = d["ExternalEntityRefHandler"]
                if entity.text is None and h is not None:
                    entity.open = True
                    try:
                        rc = self._call(h, None, entity.base, entity.systemId, entity.publicId)
                    finally:
                        entity.open = False
                    if not _as_int(rc):
                        raise _Stop(_E_EXTERNAL)
                    handled = True
                dtd.keep_processing = dtd.standalone
            h = d["NotStandaloneHandler"]
            if not dtd.standalone and h is not None:
                if not _as_int(self._call(h)):
                    raise _Stop(_E_NOT_STANDALONE)
            return handled
        if kind == 3:
            keyword = m.group(3)
            role = {"ENTITY": "ent", "ELEMENT": "el", "ATTLIST": "att",
                    "NOTATION": "nt"}.get(keyword)
            if role is None:
                raise _Stop(_E_SYNTAX, pos)
            d["_role"] = role
            d["_decl"] = {"handled": False}
            return self._decl_handled(role)
        raise _Stop(_E_SYNTAX, pos)

    def _decl_handled(self, role):
        """Whether the tokens of a declaration go to a handler (and so not to
        the default handler)."""
        d = self.__dict__
        if not d["_dtd"].keep_processing:
            return False
        if role == "ent":
            return d["EntityDeclHandler"] is not None or d["UnparsedEntityDeclHandler"] is not None
        if role == "el":
            return d["ElementDeclHandler"] is not None
        if role == "att":
            return d["AttlistDeclHandler"] is not None
        return d["NotationDeclHandler"] is not None

    # <!ENTITY ...>

    def _role_ent(self, kind, m, text, pos):
        d = self.__dict__
        decl = d["_decl"]
        if kind == 6:
            decl["param"] = True
            return self._decl_handled("ent") and d["EntityDeclHandler"] is not None
        if kind == 8 and not m.group(9) and _NAME_ONLY.fullmatch(text):
            decl["name"] = text
            decl.setdefault("param", False)
            d["_role"] = "ent_value"
            return self._ent_handled()
        raise _Stop(_E_SYNTAX, pos)

    def _ent_handled(self):
        d = self.__dict__
        return d["_dtd"].keep_processing and d["EntityDeclHandler"] is not None

    def _role_ent_value(self, kind, m, text, pos):
        d = self.__dict__
        decl = d["_decl"]
        if kind == 4:
            decl["value"] = self._entity_value(text[1:-1], pos + 1)
            d["_role"] = "ent_close"
            return self._entity_decl_value(decl)
        if kind == 8 and text == "SYSTEM":
            d["_role"] = "ent_sysid"
            return self._ent_handled()
        if kind == 8 and text == "PUBLIC":
            d["_role"] = "ent_pubid"
            return self._ent_handled()
        raise _Stop(_E_SYNTAX, pos)

    def _entity_decl_value(self, decl):
        d = self.__dict__
        dtd = d["_dtd"]
        name = decl["name"]
        table = dtd.params if decl["param"] else dtd.entities
        if not dtd.keep_processing:
            return False
        if name in table:
            return False
        table[name] = _Entity(name, decl["value"], None, None, None, d["_base"], decl["param"])
        h = d["EntityDeclHandler"]
        if h is not None:
            self._call(h, self._intern(name), int(decl["param"]), decl["value"], d["_base"],
                       None, None, None)
            return True
        return False

    def _role_ent_pubid(self, kind, m, text, pos):
        if kind != 4:
            raise _Stop(_E_SYNTAX, pos)
        value = text[1:-1]
        if not _PUBID_CHARS.fullmatch(value):
            raise _Stop(_E_PUBLICID, pos)
        self._decl["pubid"] = " ".join(value.split())
        self.__dict__["_role"] = "ent_sysid"
        return self._ent_handled()

    def _role_ent_sysid(self, kind, m, text, pos):
        d = self.__dict__
        if kind != 4:
            raise _Stop(_E_SYNTAX, pos)
        decl = d["_decl"]
        decl["sysid"] = text[1:-1]
        decl.setdefault("pubid", None)
        d["_role"] = "ent_ndata" if not decl["param"] else "ent_close_ext"
        return self._ent_handled()

    def _role_ent_ndata(self, kind, m, text, pos):
        d = self.__dict__
        if kind == 8 and text == "NDATA":
            d["_role"] = "ent_notation"
            return d["_dtd"].keep_processing and (d["UnparsedEntityDeclHandler"] is not None or
                                                   d["EntityDeclHandler"] is not None)
        return self._role_ent_close_ext(kind, m, text, pos)

    def _role_ent_notation(self, kind, m, text, pos):
        d = self.__dict__
        if kind != 8 or m.group(9) or not _NAME_ONLY.fullmatch(text):
            raise _Stop(_E_SYNTAX, pos)
        decl = d["_decl"]
        d["_role"] = "ent_close"
        dtd = d["_dtd"]
        if not dtd.keep_processing or decl["name"] in dtd.entities:
            return False
        dtd.entities[decl["name"]] = _Entity(decl["name"], None, decl["sysid"], decl["pubid"],
                                             text, d["_base"])
        h = d["UnparsedEntityDeclHandler"]
        if h is not None:
            self._call(h, self._intern(decl["name"]), d["_base"], decl["sysid"], decl["pubid"],
                       text)
            return True
        h = d["EntityDeclHandler"]
        if h is not None:
            self._call(h, self._intern(decl["name"]), 0, None, d["_base"], decl["sysid"],
                       decl["pubid"], text)
            return True
        return False

    def _role_ent_close_ext(self, kind, m, text, pos):
        d = self.__dict__
        if not (kind == 11 and text == ">"):
            raise _Stop(_E_SYNTAX, pos)
        decl = d["_decl"]
        d["_role"] = "subset"
        dtd = d["_dtd"]
        table = dtd.params if decl["param"] else dtd.entities
        if not dtd.keep_processing or decl["name"] in table:
            return False
        table[decl["name"]] = _Entity(decl["name"], None, decl["sysid"], decl["pubid"], None,
                                      d["_base"], decl["param"])
        h = d["EntityDeclHandler"]
        if h is not None:
            self._call(h, self._intern(decl["name"]), int(decl["param"]), None, d["_base"],
                       decl["sysid"], decl["pubid"], None)
            return True
        return False

    def _role_ent_close(self, kind, m, text, pos):
        d = self.__dict__
        if not (kind == 11 and text == ">"):
            raise _Stop(_E_SYNTAX, pos)
        d["_role"] = "subset"
        return self._ent_handled()

    def _entity_value(self, value, vstart):
        """An entity's replacement text: character references replaced,
        line ends normalised; general entity references stay."""
        if "%" in value:
            raise _Stop(_E_PARAM_REF, vstart + value.index("%"))
        if "&" in value:
            out = []
            i = 0
            while True:
                j = value.find("&", i)
                if j < 0:
                    out.append(value[i:])
                    break
                out.append(value[i:j])
                r = _REF.match(value, j)
                if r is None or self._ns and r.group(1) and ":" in r.group(1):
                    # Expat declares the entity with the text before it.
                    bad = self._ref_error(value, j, len(value), True)[1]
                    if r is not None:
                        bad = j + 1 + r.group(1).index(":")
                    self.__dict__["_ev"] = vstart + bad
                    self._bad_entity_value("".join(out))
                    raise _Stop(_E_INVALID, vstart + bad)
                if r.group(1) is None:
                    try:
                        out.append(self._char_ref(r, True, vstart + j))
                    except _Stop:
                        self.__dict__["_ev"] = vstart + j
                        self._bad_entity_value("".join(out))
                        raise
                else:
                    out.append(r.group(0))
                i = r.end()
            value = "".join(out)
        if "\r" in value:
            value = _NEWLINES.sub("\n", value)
        return value

    def _bad_entity_value(self, value):
        d = self.__dict__
        decl = d["_decl"]
        h = d["EntityDeclHandler"]
        if h is not None and d["_dtd"].keep_processing:
            self._call(h, self._intern(decl["name"]), int(decl["param"]), value, d["_base"],
                       None, None, None)

    # <!NOTATION ...>

    def _role_nt(self, kind, m, text, pos):
        d = self.__dict__
        if kind == 8 and not m.group(9) and _NAME_ONLY.fullmatch(text):
            d["_decl"].update(name=text, sysid=None, pubid=None)
            d["_role"] = "nt_id"
            return self._decl_handled("nt")
        raise _Stop(_E_SYNTAX, pos)

    def _role_nt_id(self, kind, m, text, pos):
        d = self.__dict__
        if kind == 8 and text in ("SYSTEM", "PUBLIC"):
            d["_role"] = "nt_sysid" if text == "SYSTEM" else "nt_pubid"
            return self._decl_handled("nt")
        raise _Stop(_E_SYNTAX, pos)

    def _role_nt_pubid(self, kind, m, text, pos):
        d = self.__dict__
        if kind != 4:
            raise _Stop(_E_SYNTAX, pos)
        value = text[1:-1]
        if not _PUBID_CHARS.fullmatch(value):
            raise _Stop(_E_PUBLICID, pos)
        d["_decl"]["pubid"] = " ".join(value.split())
        d["_role"] = "nt_after_pubid"
        return self._decl_handled("nt")

    def _role_nt_after_pubid(self, kind, m, text, pos):
        if kind == 4:
            self._decl["sysid"] = text[1:-1]
            self.__dict__["_role"] = "nt_close"
            return self._notation_decl()
        return self._role_nt_close(kind, m, text, pos)

    def _role_nt_sysid(self, kind, m, text, pos):
        if kind != 4:
            raise _Stop(_E_SYNTAX, pos)
        self._decl["sysid"] = text[1:-1]
        self.__dict__["_role"] = "nt_close"
        return self._notation_decl()

    def _notation_decl(self):
        # Reported at the system literal (or at the ">" when there is none).
        d = self.__dict__
        decl = d["_decl"]
        decl["reported"] = True
        h = d["NotationDeclHandler"]
        if h is not None and d["_dtd"].keep_processing:
            self._call(h, self._intern(decl["name"]), d["_base"], decl["sysid"], decl["pubid"])
            return True
        return False

    def _role_nt_close(self, kind, m, text, pos):
        d = self.__dict__
        if not (kind == 11 and text == ">"):
            raise _Stop(_E_SYNTAX, pos)
        d["_role"] = "subset"
        decl = d["_decl"]
        h = d["NotationDeclHandler"]
        if decl.get("reported"):
            return h is not None
        if h is not None and d["_dtd"].keep_processing:
            self._call(h, self._intern(decl["name"]), d["_base"], decl["sysid"], decl["pubid"])
            return True
        return False

    # <!ELEMENT ...>

    def _role_el(self, kind, m, text, pos):
        d = self.__dict__
        if kind == 8 and not m.group(9) and _NAME_ONLY.fullmatch(text):
            d["_decl"].update(name=text, groups=[], model=None)
            d["_role"] = "el_content"
            return self._decl_handled("el")
        raise _Stop(_E_SYNTAX, pos)

    def _role_el_content(self, kind, m, text, pos):
        d = self.__dict__
        decl = d["_decl"]
        if kind == 8 and text in ("EMPTY", "ANY"):
            decl["model"] = (1 if text == "EMPTY" else 2, 0, None, ())
            d["_role"] = "el_close"
            return self._element_decl(decl)
        if kind == 11 and text == "(":
            decl["groups"] = [[None, []]]     # [separator, children]
            d["_role"] = "el_group_start"
            return self._decl_handled("el")
        raise _Stop(_E_SYNTAX, pos)

    def _role_el_group_start(self, kind, m, text, pos):
        d = self.__dict__
        decl = d["_decl"]
        groups = decl["groups"]
        if kind == 7 and text == "#PCDATA" and len(groups) == 1:
            d["_role"] = "el_mixed"
            decl["mixed"] = []
            return self._decl_handled("el")
        if kind == 11 and text == "(":
            groups.append([None, []])
            return self._decl_handled("el")
        if kind == 8 and _NAME_ONLY.fullmatch(m.group(8)):
            groups[-1][1].append((4, _QUANT[m.group(9)], m.group(8), ()))
            d["_role"] = "el_group_after"
            return self._decl_handled("el")
        raise _Stop(_E_SYNTAX, pos)

    def _role_el_group_after(self, kind, m, text, pos):
        d = self.__dict__
        decl = d["_decl"]
        groups = decl["groups"]
        if kind == 11 and text in "|,":
            if groups[-1][0] is None:
                groups[-1][0] = text
            elif groups[-1][0] != text:
                raise _Stop(_E_SYNTAX, pos)
            d["_role"] = "el_group_start_nopcdata"
            return self._decl_handled("el")
        if kind == 10:
            sep, children = groups.pop()
            node = (5 if sep == "|" else 6, _QUANT[text[1:]], None, tuple(children))
            if groups:
                groups[-1][1].append(node)
                return self._decl_handled("el")
            decl["model"] = node
            d["_role"] = "el_close"
            return self._element_decl(decl)
        raise _Stop(_E_SYNTAX, pos)

    def _role_el_group_start_nopcdata(self, kind, m, text, pos):
        if kind == 7:
            raise _Stop(_E_SYNTAX, pos)
        return self._role_el_group_start(kind, m, text, pos)

    def _role_el_mixed(self, kind, m, text, pos):
        d = self.__dict__
        decl = d["_decl"]
        if kind == 11 and text == "|":
            d["_role"] = "el_mixed_name"
            return self._decl_handled("el")
        if kind == 10 and (text == ")*" or text == ")" and not decl["mixed"]):
            names = tuple((4, 0, n, ()) for n in decl["mixed"])
            decl["model"] = (3, 2 if text == ")*" else 0, None, names)
            d["_role"] = "el_close"
            return self._element_decl(decl)
        raise _Stop(_E_SYNTAX, pos)

    def _role_el_mixed_name(self, kind, m, text, pos):
        d = self.__dict__
        if kind == 8 and not m.group(9) and _NAME_ONLY.fullmatch(text):
            d["_decl"]["mixed"].append(text)
            d["_role"] = "el_mixed"
            return self._decl_handled("el")
        raise _Stop(_E_SYNTAX, pos)

    def _element_decl(self, decl):
        d = self.__dict__
        h = d["ElementDeclHandler"]
        if h is not None and d["_dtd"].keep_processing:
            self._call(h, self._intern(decl["name"]), decl["model"])
            return True
        return False

    def _role_el_close(self, kind, m, text, pos):
        d = self.__dict__
        if not (kind == 11 and text == ">"):
            raise _Stop(_E_SYNTAX, pos)
        d["_role"] = "subset"
        return self._decl_handled("el")

    # <!ATTLIST ...>

    def _role_att(self, kind, m, text, pos):
        d = self.__dict__
        if kind == 8 and not m.group(9) and _NAME_ONLY.fullmatch(text):
            d["_decl"].update(element=text)
            d["_role"] = "att_name"
            return self._decl_handled("att")
        raise _Stop(_E_SYNTAX, pos)

    def _role_att_name(self, kind, m, text, pos):
        d = self.__dict__
        decl = d["_decl"]
        if kind == 8 and not m.group(9) and _NAME_ONLY.fullmatch(text):
            decl["attr"] = text
            d["_role"] = "att_type"
            return self._decl_handled("att")
        if kind == 11 and text == ">":
            d["_role"] = "subset"
            return self._decl_handled("att")
        raise _Stop(_E_SYNTAX, pos)

    def _role_att_type(self, kind, m, text, pos):
        d = self.__dict__
        decl = d["_decl"]
        if kind == 8 and text in ("CDATA", "ID", "IDREF", "IDREFS", "ENTITY", "ENTITIES",
                                  "NMTOKEN", "NMTOKENS"):
            decl["type"] = text
            d["_role"] = "att_default"
        elif kind == 8 and text == "NOTATION":
            decl["type"] = "NOTATION"
            d["_role"] = "att_notation"
        elif kind == 11 and text == "(":
            decl["type"] = "("
            d["_role"] = "att_enum"
        else:
            raise _Stop(_E_SYNTAX, pos)
        return self._decl_handled("att")

    def _role_att_notation(self, kind, m, text, pos):
        d = self.__dict__
        if kind == 11 and text == "(":
            d["_decl"]["type"] += "("
            d["_role"] = "att_enum_names"
            return self._decl_handled("att")
        raise _Stop(_E_SYNTAX, pos)

    def _role_att_enum(self, kind, m, text, pos):
        d = self.__dict__
        if kind == 8 and not m.group(9):
            d["_decl"]["type"] += text
            d["_role"] = "att_enum_after"
            return self._decl_handled("att")
        raise _Stop(_E_SYNTAX, pos)

    def _role_att_enum_names(self, kind, m, text, pos):
        d = self.__dict__
        if kind == 8 and not m.group(9) and _NAME_ONLY.fullmatch(text):
            d["_decl"]["type"] += text
            d["_role"] = "att_enum_names_after"
            return self._decl_handled("att")
        raise _Stop(_E_SYNTAX, pos)

    def _role_att_enum_after(self, kind, m, text, pos, names=False):
        d = self.__dict__
        decl = d["_decl"]
        if kind == 11 and text == "|":
            decl["type"] += "|"
            d["_role"] = "att_enum_names" if names else "att_enum"
            return self._decl_handled("att")
        if kind == 10 and text == ")":
            decl["type"] += ")"
            d["_role"] = "att_default"
            return self._decl_handled("att")
        raise _Stop(_E_SYNTAX, pos)

    def _role_att_enum_names_after(self, kind, m, text, pos):
        return self._role_att_enum_after(kind, m, text, pos, True)

    def _role_att_default(self, kind, m, text, pos):
        d = self.__dict__
        decl = d["_decl"]
        if kind == 7 and text in ("#REQUIRED", "#IMPLIED"):
            d["_role"] = "att_name"
            return self._attlist_decl(decl, None, text == "#REQUIRED")
        if kind == 7 and text == "#FIXED":
            d["_role"] = "att_fixed"
            return self._decl_handled("att")
        if kind == 4:
            d["_role"] = "att_name"
            value = self._attr_value(text[1:-1], pos + 1, pos, 0)
            return self._attlist_decl(decl, value, False)
        raise _Stop(_E_SYNTAX, pos)

    def _role_att_fixed(self, kind, m, text, pos):
        d = self.__dict__
        if kind == 4:
            d["_role"] = "att_name"
            value = self._attr_value(text[1:-1], pos + 1, pos, 0)
            return self._attlist_decl(d["_decl"], value, True)
        raise _Stop(_E_SYNTAX, pos)

    def _attlist_decl(self, decl, value, required):
        d = self.__dict__
        dtd = d["_dtd"]
        if not dtd.keep_processing:
            return False
        element, attr = decl["element"], decl["attr"]
        defaults = dtd.defaults.setdefault(element, [])
        declared = decl.setdefault("declared", set())
        known = dtd.__dict__.setdefault("_declared_attrs", set())
        first = (element, attr) not in known
        known.add((element, attr))
        if value is not None and first:
            if decl["type"] == "CDATA" or True:
                defaults.append((attr, value))
        declared.add(attr)
        h = d["AttlistDeclHandler"]
        if h is not None:
            self._call(h, self._intern(element), self._intern(attr), decl["type"], value,
                       int(required))
            return True
        return False


_QUANT = {"": 0, "?": 1, "*": 2, "+": 3}


def _cut(error, final, top):
    """Whether a construct that did not match is only cut off by the end of
    a chunk (then the parser waits for more input) rather than wrong."""
    return error[0] == _E_UNCLOSED and not final and top


def _as_int(rc):
    """The int a handler's result stands for, as pyexpat reads it."""
    if isinstance(rc, int):
        return rc
    if rc is None:
        raise TypeError("an integer is required")
    try:
        return rc.__index__()
    except AttributeError:
        raise TypeError("an integer is required") from None


class _TableDecoder:
    """Decodes a one-byte encoding through a table (pyexpat accepts any such
    Python codec for an encoding Expat does not know)."""

    def __init__(self, mapping):
        self.mapping = mapping

    def decode(self, data, final=False):
        return data.decode("latin-1").translate(self.mapping)


def ParserCreate(encoding=None, namespace_separator=None, intern=None):
    """Return a new XML parser object."""
    if encoding is not None and not isinstance(encoding, str):
        raise TypeError(f"ParserCreate() argument 'encoding' must be str or None, not "
                        f"{type(encoding).__name__}")
    if namespace_separator is not None:
        if not isinstance(namespace_separator, str):
            raise TypeError(f"ParserCreate() argument 'namespace_separator' must be str or "
                            f"None, not {type(namespace_separator).__name__}")
        if len(namespace_separator) > 1:
            raise ValueError("namespace_separator must be at most one character, omitted, "
                             "or None")
    if intern is None:
        intern = {}
    elif not isinstance(intern, dict):
        raise TypeError("intern must be a dictionary")
    return XMLParserType(encoding, namespace_separator, intern)


XMLParserType.__name__ = "xmlparser"
XMLParserType.__qualname__ = "xmlparser"
XMLParserType.__module__ = __name__
