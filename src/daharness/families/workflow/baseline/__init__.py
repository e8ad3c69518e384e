"""Spider2-V's baseline agent as released (`mm_agents/agent.py` of xlang-ai/Spider2-V at c2a3a6c, with
`agent_ref/run_spider2v_agent.py` and `lib_run_single.py`), as pure functions the `desktop` agent uses:

- `templates`: the prompt texts, read from the user's Spider2-V checkout by parsing its Python files (never
  running them); `own_prompt`: daharness's own texts of the same shape, for suites without a checkout;
- `prompts`: the system message and each step's user message, assembled as `PromptAgent.predict` does;
- `replies`: a reply's actions, in the official mode (the release's parsers, defects included) or the
  corrected one (the default);
- `tree`: the accessibility table cut at 5,000 tokens of gpt-4's encoding, offline;
- `agent`: the step loop of `lib_run_single.py` on the sandbox's desktop.
"""
