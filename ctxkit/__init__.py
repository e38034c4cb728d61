"""ctxkit: manage an LLM agent's context window from the outside."""
__version__ = "0.1.0"
