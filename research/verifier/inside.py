"""What the judge computes inside one llama.cpp pass: every layer's output and every head's attention (issue 37).

llama-cpp-python exposes only the last hidden state. llama.cpp's eval callback (`llama_context_params.cb_eval`,
`ggml_backend_sched_eval_callback`) is called with each graph node it computes; this module installs one on a
judge's context and copies out, for the batch just evaluated,

- `l_out-N`: layer N's output (the residual stream), [n_tokens, n_embd];
- `kq_soft_max-N`: layer N's attention weights, [n_head, n_tokens, n_kv] (flash attention off, llama-cpp-python's
  default: with it on the softmax is fused and never materialised).

The tensor layout is ggml's `struct ggml_tensor` (ggml.h of the llama-cpp-python 0.3.36 wheel, ggml 0.25.3): this
is research code, checked against that one build (`check()` fails loudly when the fields do not read as expected).
"""
from __future__ import annotations

import ctypes
import re

import numpy as np

GGML_TYPE_F32 = 0
NAME = re.compile(rb"^(l_out|kq_soft_max)-(\d+)$")


class Tensor(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("buffer", ctypes.c_void_p),
        ("ne", ctypes.c_int64 * 4),
        ("nb", ctypes.c_size_t * 4),
        ("op", ctypes.c_int),
        ("op_params", ctypes.c_int32 * 16),
        ("flags", ctypes.c_int32),
        ("src", ctypes.c_void_p * 10),
        ("view_src", ctypes.c_void_p),
        ("view_offs", ctypes.c_size_t),
        ("data", ctypes.c_void_p),
        ("name", ctypes.c_char * 64),
        ("extra", ctypes.c_void_p),
        ("padding", ctypes.c_char * 8),
    ]


CALLBACK = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p, ctypes.c_bool, ctypes.c_void_p)


class Inside:
    """Install on a `llama_cpp.Llama` (replaces its context by one with the callback); `capture` turns it on for
    the next evals; `layers` / `attention` hold what the last eval computed, by layer index."""

    def __init__(self, llm, want_layers: bool = True, want_attention: bool = True):
        from llama_cpp import _internals as internals

        self.llm = llm
        self.on = False
        self.want = {b"l_out": want_layers, b"kq_soft_max": want_attention}
        self.layers: dict[int, np.ndarray] = {}
        self.attention: dict[int, np.ndarray] = {}
        self._cb = CALLBACK(self._call)  # kept referenced: the C side holds only the pointer
        params = llm.context_params
        params.cb_eval = self._cb
        params.cb_eval_user_data = None
        old = llm._ctx
        llm._ctx = internals.LlamaContext(model=llm._model, params=params, verbose=False)
        old.close()
        llm.n_tokens = 0

    def clear(self) -> None:
        self.layers, self.attention = {}, {}

    def _call(self, ptr: int, ask: bool, _user: int) -> bool:
        if not self.on:
            return not ask  # observe nothing; keep computing
        t = Tensor.from_address(ptr)
        m = NAME.match(t.name)
        if m is None or not self.want[m.group(1)]:
            return not ask
        if ask:
            return True
        if t.type != GGML_TYPE_F32 or not t.data:
            raise RuntimeError(f"{t.name!r}: type {t.type}, data {t.data}: not an f32 tensor in host memory")
        ne = [int(x) for x in t.ne]
        n = ne[0] * ne[1] * ne[2] * ne[3]
        if t.nb[0] != 4 or t.nb[1] != 4 * ne[0]:
            raise RuntimeError(f"{t.name!r}: strides {list(t.nb)} for shape {ne}: not contiguous")
        a = np.ctypeslib.as_array(ctypes.cast(t.data, ctypes.POINTER(ctypes.c_float)), shape=(n,)).copy()
        layer = int(m.group(2))
        if m.group(1) == b"l_out":
            self.layers[layer] = a.reshape(ne[1], ne[0])  # [n_tokens, n_embd]
        else:
            self.attention[layer] = a.reshape(ne[2], ne[1], ne[0])  # [n_head, n_tokens, n_kv]
        return True
