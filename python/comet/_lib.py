"""The ctypes binding of libcomet's entry layer (include/comet/api.h).

Why ctypes: it is in the standard library, so the package needs no build
step and no compiler, and a call costs about a microsecond, well under
the estimate's own time. ctypes releases the GIL around every foreign
call, so long searches and sweeps let other Python threads run.

The shared library is found, in order: $COMET_LIBRARY; the build/
folder of the source tree this package sits in (python/comet/ ->
build/libcomet.so); the system's libcomet.so.0 (make install).
The loaded library and one session (the uncertainty-band model, built
once, read-only, shared by threads) are the module's only state.
"""
import ctypes
import ctypes.util
import os
import threading


class CometError(Exception):
    """An error from comet: bad input (status 2) or a failure.

    Carries what the CLI shows: file, line, column (1-based, 0 when not
    applicable), key (a dotted path such as strategy.tp, or a knob) and
    message; str() is the CLI's line, "file:line:col: key: message".
    """

    def __init__(self, status, file, line, column, key, message, text):
        super().__init__(text)
        self.status = status
        self.file = file
        self.line = line
        self.column = column
        self.key = key
        self.message = message


CometError.__module__ = "comet"  # its public home: comet.CometError


class _Error(ctypes.Structure):
    _fields_ = [
        ("status", ctypes.c_int),
        ("line", ctypes.c_int),
        ("column", ctypes.c_int),
        ("file", ctypes.c_char * 256),
        ("key", ctypes.c_char * 128),
        ("message", ctypes.c_char * 512),
    ]


class SearchOptions(ctypes.Structure):
    _fields_ = [
        ("npus", ctypes.c_int64),
        ("max_global_batch", ctypes.c_int64),
        ("max_microbatch", ctypes.c_int64),
        ("max_cp", ctypes.c_int64),
        ("top", ctypes.c_int),
        ("threads", ctypes.c_int),
        ("objective", ctypes.c_char_p),
        ("no_flash", ctypes.c_bool),
        ("no_offload", ctypes.c_bool),
        ("keep_dominated", ctypes.c_bool),
    ]


class SimOptions(ctypes.Structure):
    _fields_ = [
        ("congestion", ctypes.c_bool),
        ("fabric", ctypes.c_int),
        ("scheduler", ctypes.c_char_p),
        ("max_tasks", ctypes.c_int64),
    ]


class CollectiveOptions(ctypes.Structure):
    _fields_ = [
        ("collective", ctypes.c_char_p),
        ("bytes", ctypes.c_double),
        ("npus", ctypes.c_int64),
        ("splits", ctypes.c_int64),
        ("active_chunks", ctypes.c_int64),
        ("congestion", ctypes.c_bool),
        ("scheduler", ctypes.c_char_p),
    ]


PROGRESS = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64)


def _find():
    env = os.environ.get("COMET_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    tree = os.path.join(here, "..", "..", "build", "libcomet.so")
    if os.path.exists(tree):
        return os.path.normpath(tree)
    return ctypes.util.find_library("comet") or "libcomet.so.0"


def _declare(lib):
    P, I, C, B = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_bool
    E = ctypes.POINTER(_Error)
    PP = ctypes.POINTER(ctypes.c_void_p)
    CA = ctypes.POINTER(ctypes.c_char_p)
    D = ctypes.POINTER(ctypes.c_double)
    sig = {
        "comet_api_new": (I, [PP, E]),
        "comet_api_free": (None, [P]),
        "comet_api_job_read": (I, [PP, I, CA, CA, CA, I, E]),
        "comet_api_job_free": (None, [P]),
        "comet_api_estimate": (I, [P, P, C, D, I, ctypes.POINTER(B), PP, E]),
        "comet_api_search": (I, [P, P, C, ctypes.POINTER(SearchOptions), PP, E]),
        "comet_api_sweep": (I, [P, C, C, C, I, B, B, PROGRESS, P, E]),
        "comet_api_export": (I, [P, C, C, PP, E]),
        "comet_api_study": (I, [P, C, C, C, I, B, B, PROGRESS, P, PP, E]),
        "comet_api_simulate": (I, [P, C, ctypes.POINTER(SimOptions), PP, E]),
        "comet_api_collective": (I, [P, ctypes.POINTER(CollectiveOptions), PP, E]),
        "comet_parse_quantity": (I, [C, I, C, ctypes.POINTER(ctypes.c_double), E]),
        "comet_api_text_free": (None, [P]),
        "comet_result_field_count": (I, []),
        "comet_result_field_name": (C, [I]),
        "comet_preset_names": (CA, [C]),
        "comet_preset_text": (C, [C, C]),
        "comet_error_format": (C, [E, ctypes.c_char_p, ctypes.c_size_t]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args


_lock = threading.Lock()
_state = {}


def lib():
    """The loaded library (loaded on first use)."""
    l = _state.get("lib")
    if l is None:
        with _lock:
            l = _state.get("lib")
            if l is None:
                l = ctypes.CDLL(_find())
                _declare(l)
                _state["lib"] = l
    return l


def session():
    """The one session: the band model, built on first use."""
    s = _state.get("api")
    if s is None:
        l = lib()
        with _lock:
            s = _state.get("api")
            if s is None:
                h = ctypes.c_void_p()
                err = _Error()
                check(l.comet_api_new(ctypes.byref(h), ctypes.byref(err)), err)
                s = _state["api"] = h
    return s


def raise_error(err):
    buf = ctypes.create_string_buffer(1024)
    text = lib().comet_error_format(ctypes.byref(err), buf, len(buf)).decode("utf-8", "replace")
    dec = lambda b: b.decode("utf-8", "replace")
    raise CometError(err.status, dec(err.file), err.line, err.column, dec(err.key),
                     dec(err.message), text)


def check(status, err):
    if status:
        raise_error(err)


def take_text(ptr):
    """A malloc'd text from the library, as str, freed."""
    try:
        return ctypes.string_at(ptr).decode("utf-8")
    finally:
        lib().comet_api_text_free(ptr)
