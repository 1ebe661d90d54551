# Run before the user's code in every call (src/run.rs): sys.stdout and
# sys.stderr write into the plugin's capture (never to WASI's, which go to the
# server's log), sys.stdin reads the call's `stdin`, and what the sandbox
# cannot do fails with an exception that says so.
#
# Only builtin (native) modules here: importing the standard library's Python
# modules (io, os) would cost every call milliseconds.
import _io
import builtins
import math
import sys
import time

try:
    import posix
except ImportError:
    import os as posix


class OutputLimitExceeded(BaseException):
    """The run printed more than the plugin's `max_output_bytes`."""


class _Capture:
    """sys.stdout or sys.stderr: text into the plugin's capture."""

    encoding = "utf-8"
    errors = "strict"
    newlines = None
    closed = False
    line_buffering = False

    def __init__(self, fd, name):
        self._fd = fd
        self.name = name

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        if _toolcell_write(self._fd, s):
            raise OutputLimitExceeded(_toolcell_stop)
        return len(s)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        pass

    def writable(self):
        return True

    def readable(self):
        return False

    def seekable(self):
        return False

    def isatty(self):
        return False

    def fileno(self):
        raise _io.UnsupportedOperation("the sandbox's output has no file descriptor")

    def close(self):
        pass


# WASI has no time zone: the sandbox's clock is UTC. `time.strptime` and
# `datetime.strptime` need these names, which RustPython leaves out on WASI.
if not hasattr(time, "tzname"):
    time.tzname = ("UTC", "UTC")
    time.timezone = 0
    time.altzone = 0
    time.daylight = 0


# RustPython rounds floats through their decimal digits (round(2.675, 2) is
# 2.68 there); CPython rounds the exact binary value (2.67), as a correctly
# rounded format of it does.
def round(number, ndigits=None, *, _round=builtins.round, _isfinite=math.isfinite):
    if ndigits is None:
        return _round(number)
    if type(number) is float and type(ndigits) is int and 0 <= ndigits <= 300 and _isfinite(number):
        return float(format(number, f".{ndigits}f"))
    return _round(number, ndigits)


builtins.round = round
del round

sys.stdout = sys.__stdout__ = _Capture(1, "<stdout>")
sys.stderr = sys.__stderr__ = _Capture(2, "<stderr>")
sys.stdin = sys.__stdin__ = _io.StringIO(_toolcell_stdin)


def _mend_errors(function):
    """`function`, raising OS errors with the C library's message, as CPython
    does: RustPython on WASI gives them Rust's, which ends in the number
    again ("No such file or directory (os error 44)")."""

    def mended(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except OSError as error:
            text = error.strerror
            cut = text.find(" (os error ") if type(text) is str else -1
            if cut >= 0:
                error.strerror = text[:cut]
                if len(error.args) == 2:
                    error.args = (error.errno, error.strerror)
            raise

    mended.__name__ = function.__name__
    mended.__qualname__ = function.__qualname__
    mended.__doc__ = function.__doc__
    return mended


# The functions that touch files, before `os` copies them from `posix`.
_io.open = builtins.open = _mend_errors(_io.open)
for _name in ("chdir", "close", "fstat", "fsync", "ftruncate", "getcwd", "link", "listdir",
              "lseek", "lstat", "mkdir", "open", "read", "readinto", "readlink", "remove",
              "rename", "replace", "rmdir", "scandir", "stat", "symlink", "truncate", "unlink",
              "utime", "write"):
    if hasattr(posix, _name):
        setattr(posix, _name, _mend_errors(getattr(posix, _name)))


def _toolcell_format(error):
    """`error` with its traceback, as CPython prints it, without the frames
    of this prelude's functions, which CPython does not have."""
    import traceback

    seen = set()
    pending = [error]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        pending += (current.__cause__, current.__context__)
        first = current.__traceback__
        while first is not None and first.tb_frame.f_code.co_filename == "<prelude>":
            first = first.tb_next
        current.__traceback__ = entry = first
        while entry is not None:
            following = entry.tb_next
            while following is not None and following.tb_frame.f_code.co_filename == "<prelude>":
                following = following.tb_next
            entry.tb_next = following
            entry = following
    return "".join(traceback.format_exception(error))


def _no_process(name):
    def refuse(*args, **kwargs):
        raise PermissionError(
            f"{name} is not available: run_python runs in a sandbox that cannot start processes"
        )

    refuse.__name__ = name.rpartition(".")[2]
    return refuse


# Not `fork`: the standard library asks `hasattr(os, "fork")` to decide
# whether it may fork (random, for one), and the answer must stay no.
for _name in ("system", "popen", "execv", "execve", "execvp", "execvpe", "execl", "execle",
              "execlp", "execlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl",
              "spawnle", "spawnlp", "spawnlpe", "kill", "killpg"):
    # `os` copies `posix`'s functions when it is first imported.
    setattr(posix, _name, _no_process("os." + _name))
    if "os" in sys.modules:
        setattr(sys.modules["os"], _name, _no_process("os." + _name))


class _Refused:
    """Finds the modules the sandbox has no use for and refuses them by name."""

    _why = {
        "subprocess": "it cannot start processes",
        "_posixsubprocess": "it cannot start processes",
        "multiprocessing": "it cannot start processes",
        "ssl": "it has no network sockets",
        "_ssl": "it has no network sockets",
        "ctypes": "it cannot load native code",
        "_ctypes": "it cannot load native code",
        "cffi": "it cannot load native code",
    }

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        why = cls._why.get(name)
        if why is None:
            return None
        raise ImportError(
            f"No module named {name!r}: run_python runs in a sandbox and {why}",
            name=name,
        )


class _Files:
    """Imports the code's own modules: `name.py` or a folder `name/` with an
    `__init__.py`, from the folders on `sys.path` ('' is the working
    directory, the first mount, as for `python -c`), and a package's
    submodules from its folder. Last on `sys.meta_path`, after the frozen
    standard library, so that a run pays for it only when it imports a module
    of its own, and a file cannot shadow a standard module. Files are read
    through the sandbox like any other."""

    @staticmethod
    def _is_file(path):
        try:
            return posix.stat(path).st_mode & 0o170000 == 0o100000
        except (OSError, ValueError):
            return False

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        tail = name.rpartition(".")[2]
        for folder in sys.path if path is None else path:
            if not isinstance(folder, str):
                continue
            if not folder.startswith("/"):
                # Absolute, as CPython makes them (`__file__`, `__path__`).
                folder = f"{posix.getcwd()}/{folder}" if folder else posix.getcwd()
            base = f"{folder.rstrip('/')}/{tail}"
            for origin, package in ((base + "/__init__.py", True), (base + ".py", False)):
                if cls._is_file(origin):
                    spec = _ModuleSpec(name, cls, origin=origin, is_package=package)
                    if package:
                        spec.submodule_search_locations.append(base)
                    return spec
        return None

    @staticmethod
    def create_module(spec):
        return None

    @staticmethod
    def exec_module(module):
        # `__file__` here: the frozen importlib cannot compute the `__cached__`
        # that a spec with a location would ask it for.
        origin = module.__file__ = module.__spec__.origin
        with _io.open(origin, "rb") as file:
            source = file.read()
        exec(compile(source, origin, "exec", dont_inherit=True), module.__dict__)


class _MendCsv:
    """Loads the builtin `_csv` with CPython's reader and writer (csv_port.py,
    which says why) in place of RustPython's, when the code first imports
    `csv` or `_csv`: a run that uses no CSV does not compile them."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "_csv":
            return None
        spec = _BuiltinImporter.find_spec(name)
        if spec is not None:
            spec.loader = cls
        return spec

    @staticmethod
    def create_module(spec):
        module = _BuiltinImporter.create_module(spec)
        scope = {"_csv": module, "__name__": "_csv"}
        exec(compile(_toolcell_csv_port, "<csv_port.py>", "exec"), scope)
        module.reader, module.writer = scope["reader"], scope["writer"]
        return module

    @staticmethod
    def exec_module(module):
        _BuiltinImporter.exec_module(module)


class _MendExpat:
    """Loads `pyexpat` from expat_port.py (which says why) in place of
    RustPython's, when the code first imports it (through `xml.etree`,
    `xml.dom.minidom`, `xml.sax`, `plistlib` or itself)."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "pyexpat":
            return None
        return _ModuleSpec(name, cls, origin="expat_port.py")

    @staticmethod
    def create_module(spec):
        module = type(sys)("pyexpat")
        module.__spec__ = spec
        module.__loader__ = spec.loader
        exec(compile(_toolcell_expat_port, "<expat_port.py>", "exec"), module.__dict__)
        return module

    @staticmethod
    def exec_module(module):
        pass


class _MendParseError:
    """Gives ElementTree's `ParseError` CPython's `str()` when ElementTree is
    imported: RustPython's `str()` of a `SyntaxError` with no file or line
    ends in "(None, line None)", and `ParseError` is one."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "xml.etree.ElementTree":
            return None
        spec = _FrozenImporter.find_spec(name)
        if spec is not None:
            spec.loader = cls
        return spec

    @staticmethod
    def create_module(spec):
        return _FrozenImporter.create_module(spec)

    @staticmethod
    def exec_module(module):
        _FrozenImporter.exec_module(module)

        def __str__(self):
            # CPython's SyntaxError_str.
            filename = self.filename.rpartition("/")[2] if type(self.filename) is str else None
            if filename and type(self.lineno) is int:
                return f"{self.msg} ({filename}, line {self.lineno})"
            if filename:
                return f"{self.msg} ({filename})"
            if type(self.lineno) is int:
                return f"{self.msg} (line {self.lineno})"
            return str(self.msg)

        module.ParseError.__str__ = __str__


class _NoSockets:
    """`_socket` with no sockets: the constants, exceptions and pure functions
    the standard library's `socket` reads, a `socket` type that cannot be
    made, and name lookups that refuse. So `socket`, and what imports it at
    its top (`http.client`, `urllib.request`, `logging.handlers`, `xml.sax`),
    import as under CPython, and reaching the network fails with the reason."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "_socket":
            return None
        return _ModuleSpec(name, cls, origin="run_python")

    @staticmethod
    def create_module(spec):
        module = type(sys)("_socket")
        why = "run_python runs in a sandbox that has no network sockets"

        def refuse(name):
            def refused(*args, **kwargs):
                raise PermissionError(f"socket.{name} is not available: {why}")

            refused.__name__ = name
            return refused

        class socket:
            """A socket, which the sandbox cannot make."""

            __slots__ = ()

            def __init__(self, *args, **kwargs):
                raise PermissionError(f"socket.socket is not available: {why}")

        module.socket = module.SocketType = socket
        # Linux's numbers, as CPython there has them.
        module.__dict__.update(
            AF_UNSPEC=0, AF_UNIX=1, AF_INET=2, AF_INET6=10, SOCK_STREAM=1, SOCK_DGRAM=2,
            SOCK_RAW=3, SOL_SOCKET=1, SO_REUSEADDR=2, SO_KEEPALIVE=9, SO_BROADCAST=6,
            IPPROTO_IP=0, IPPROTO_TCP=6, IPPROTO_UDP=17, IPPROTO_IPV6=41, TCP_NODELAY=1,
            IPV6_V6ONLY=26, AI_PASSIVE=1, AI_CANONNAME=2, AI_NUMERICHOST=4, NI_NUMERICHOST=1,
            NI_NUMERICSERV=2, MSG_PEEK=2, SHUT_RD=0, SHUT_WR=1, SHUT_RDWR=2, SOMAXCONN=4096,
            has_ipv6=False, error=OSError, timeout=TimeoutError,
        )
        module.herror = type("herror", (OSError,), {"__module__": "socket"})
        module.gaierror = type("gaierror", (OSError,), {"__module__": "socket"})
        timeout = [None]
        module.getdefaulttimeout = lambda: timeout[0]

        def setdefaulttimeout(value):
            timeout[0] = None if value is None else float(value)

        module.setdefaulttimeout = setdefaulttimeout
        module.gethostname = lambda: "localhost"
        for name in ("htons", "ntohs"):
            setattr(module, name, lambda x: ((x & 0xFF) << 8) | ((x >> 8) & 0xFF))
        for name in ("htonl", "ntohl"):
            setattr(module, name, lambda x: int.from_bytes(x.to_bytes(4, "little"), "big"))
        for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr",
                     "getnameinfo", "getservbyname", "getservbyport", "getprotobyname",
                     "socketpair", "fromfd", "inet_aton", "inet_ntoa", "inet_pton",
                     "inet_ntop"):
            setattr(module, name, refuse(name))
        return module

    @staticmethod
    def exec_module(module):
        pass


from _frozen_importlib import BuiltinImporter as _BuiltinImporter
from _frozen_importlib import FrozenImporter as _FrozenImporter
from _frozen_importlib import ModuleSpec as _ModuleSpec

sys.path.insert(0, "")
sys.meta_path[0:0] = [_Refused, _NoSockets, _MendCsv, _MendExpat, _MendParseError]
sys.meta_path.append(_Files)
for _name in (*_Refused._why, "_socket", "socket", "_csv", "csv", "pyexpat",
              "xml.etree.ElementTree"):
    sys.modules.pop(_name, None)
del _name, _mend_errors, _no_process, _Capture, _Refused, _NoSockets, _Files, _MendCsv, _MendExpat
del _MendParseError
