"""The engine's vocabulary: events (what the agent did), code facts, and the derived state."""
from . import calls as _calls, events as _events, rendered as _rendered, state as _state
from .calls import *  # noqa: F401,F403
from .events import *  # noqa: F401,F403
from .rendered import *  # noqa: F401,F403
from .state import *  # noqa: F401,F403

__all__ = [n for m in (_calls, _events, _rendered, _state) for n in vars(m)
           if not n.startswith("_") and n not in ("annotations", "dataclass", "field", "re")
           and getattr(vars(m)[n], "__module__", m.__name__) == m.__name__]
