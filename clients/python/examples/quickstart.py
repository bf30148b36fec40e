from flashbulb import Flashbulb, FlashbulbError

fb = Flashbulb()  # FLASHBULB_URL (else http://localhost:6381) and FLASHBULB_API_KEY
m = fb.remember(content="Alice prefers green tea in the morning", entity_id="alice", importance=0.8)
hits = fb.recall(cue="what does Alice drink?", top_k=3).results
print(hits[0].memory.content, round(hits[0].relevance, 2))
fb.revise(m.memory_id, content="Alice switched to coffee")
try:
    fb.get("00000000000000000000000000000000")
except FlashbulbError as err:
    print(err.status, err.error_code)  # 404 not_found
