"""cudalens.agents: the Judge (verdicts), the Coder (LLM client, prompts, extraction) and the optimize loop."""
