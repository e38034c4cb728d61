"""all-MiniLM-L6-v2 (sentence-transformers) with an ONNX graph over its weights, for ctxkit-cli."""
import os

__version__ = "1.1.0"
MODEL_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model")
