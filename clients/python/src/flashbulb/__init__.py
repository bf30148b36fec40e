"""Flashbulb's Python client: ``Flashbulb`` (sync) and ``AsyncFlashbulb`` over the REST API.

    from flashbulb import Flashbulb
    fb = Flashbulb()  # FLASHBULB_URL (else http://localhost:6381) and FLASHBULB_API_KEY
    m = fb.remember(content="Alice prefers green tea", entity_id="alice")
    hits = fb.recall(cue="what does Alice drink?", top_k=5).results

Replies are pydantic models generated from the OpenAPI document (:mod:`flashbulb.models`).
"""
from . import models
from ._client import AsyncFlashbulb, AsyncSubscription, Flashbulb, Subscription
from ._generated import HAND_WRITTEN, NOT_REST, OPERATIONS
from ._config import DEFAULT_URL
from ._transport import NOT_GIVEN, FlashbulbConnectionError, FlashbulbError, NotGiven, RequestOptions, RetryPolicy

__all__ = [
    "Flashbulb", "AsyncFlashbulb", "Subscription", "AsyncSubscription", "FlashbulbError", "FlashbulbConnectionError",
    "RetryPolicy", "DEFAULT_URL",
    "RequestOptions", "NOT_GIVEN", "NotGiven", "OPERATIONS", "HAND_WRITTEN", "NOT_REST", "models",
]
__version__ = "0.1.0"
