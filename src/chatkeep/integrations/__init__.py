"""chatkeep inside the frameworks people use (SPEC §15).

- :mod:`chatkeep.integrations.agents` — ``ChatkeepSession``, the OpenAI Agents SDK ``Session``
  protocol on a chatkeep store, and ``call_model_input_filter`` (extra ``chatkeep[agents]``).
- :mod:`chatkeep.integrations.langchain` — ``ChatkeepChatMessageHistory``, LangChain's
  ``BaseChatMessageHistory``, and ``request_rules`` as a runnable (extra ``chatkeep[langchain]``).

Each framework is imported only by its own module. Both keep a framework's conversation as a
saved chatkeep session (visible and searchable in the drawer, images stored once), and both
put chatkeep's request rules — labels for images the model has already answered, short stubs
for cold attachments — in front of the framework's model calls.
"""
