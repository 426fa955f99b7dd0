"""The Coder: an OpenAI-compatible chat client, its prompts, and extraction of the new source from replies."""
