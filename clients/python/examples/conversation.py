from flashbulb import Flashbulb

fb = Flashbulb()  # FLASHBULB_URL, FLASHBULB_API_KEY (and FLASHBULB_WORKSPACE, if set)
messages = [
    {"message_id": "m1", "speaker": "Caroline", "content": "I just adopted a cat!", "occurred_at": "2023-05-08T13:56:00Z"},
    {"message_id": "m2", "speaker": "Melanie", "content": "What is its name?", "occurred_at": "2023-05-08T13:56:20Z"},
    {"message_id": "m3", "speaker": "Caroline", "content": "Oliver, he loves boxes", "occurred_at": "2023-05-08T13:56:40Z"},
]
first = fb.ingest("chat-7", messages=messages)
again = fb.ingest("chat-7", messages=messages)  # a retry: nothing is written twice
print(again.existing, again.memory_ids == first.memory_ids)
hits = fb.recall(cue="What is the name of Caroline's cat?", conversation_id="chat-7", top_k=3).results
print(sorted(h.memory.speaker for h in hits))
