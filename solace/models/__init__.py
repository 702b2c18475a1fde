"""Model backends: embedders, the token counter, LLMs, and the guard on LLM output.

Everything here is synchronous and loads lazily; nothing downloads. Public names are
re-exported below; submodules may change.
"""

from __future__ import annotations

from solace.models.affect import Affect as Affect
from solace.models.affect import score_affect as score_affect
from solace.models.embedder import Embedder as Embedder
from solace.models.embedder import HashingEmbedder as HashingEmbedder
from solace.models.embedder import MiniLMEmbedder as MiniLMEmbedder
from solace.models.embedding_cache import SharedEmbedder as SharedEmbedder
from solace.models.entities import Salient as Salient
from solace.models.entities import salient as salient
from solace.models.factory import ModelsConfigLike as ModelsConfigLike
from solace.models.factory import build_embedder as build_embedder
from solace.models.factory import build_llm as build_llm
from solace.models.factory import build_tokenizer as build_tokenizer
from solace.models.guard import Guard as Guard
from solace.models.guard import GuardPolicy as GuardPolicy
from solace.models.guard import Verdict as Verdict
from solace.models.llama_cpp import LlamaCppLLM as LlamaCppLLM
from solace.models.llm import LLM as LLM
from solace.models.llm import ChatMessage as ChatMessage
from solace.models.llm import EmbedderLoadError as EmbedderLoadError
from solace.models.llm import LLMOutputError as LLMOutputError
from solace.models.llm import LLMStats as LLMStats
from solace.models.llm import LLMUnavailableError as LLMUnavailableError
from solace.models.llm import ModelError as ModelError
from solace.models.llm import NoLLM as NoLLM
from solace.models.onnx_embedder import OnnxMiniLMEmbedder as OnnxMiniLMEmbedder
from solace.models.openai_compat import OpenAICompatibleLLM as OpenAICompatibleLLM
from solace.models.schema import SchemaError as SchemaError
from solace.models.schema import validate as validate
from solace.models.tokenizer import Tokenizer as Tokenizer
from solace.models.tokenizer import WordPieceTokenizer as WordPieceTokenizer

__all__ = [
    "LLM",
    "Affect",
    "ChatMessage",
    "Embedder",
    "EmbedderLoadError",
    "Guard",
    "GuardPolicy",
    "HashingEmbedder",
    "LLMOutputError",
    "LLMStats",
    "LLMUnavailableError",
    "LlamaCppLLM",
    "MiniLMEmbedder",
    "ModelError",
    "ModelsConfigLike",
    "NoLLM",
    "OnnxMiniLMEmbedder",
    "OpenAICompatibleLLM",
    "Salient",
    "SchemaError",
    "SharedEmbedder",
    "Tokenizer",
    "Verdict",
    "WordPieceTokenizer",
    "build_embedder",
    "build_llm",
    "build_tokenizer",
    "salient",
    "score_affect",
    "validate",
]
