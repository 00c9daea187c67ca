"""Suite-wide: the chat-model conventions of other tools (``Settings.openai_api_key`` and the
rest) are dropped from the environment, so a developer's shell never points the tests at a
paid endpoint; the tests of those conventions set them themselves."""

import os

from ragchat.settings import CONVENTIONAL_LLM_VARIABLES

for _name in CONVENTIONAL_LLM_VARIABLES:
    os.environ.pop(_name, None)
