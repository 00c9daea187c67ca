"""Tenancy: who may see what. Which documents of a knowledge base a person may see and under
which name (``documents.py``: ownership is the upload folder, sharing identical bytes stays
invisible), and which knowledge bases (``knowledge_bases.py``: created ones are their owner's
until shared, the others are everyone's).

The retriever filters every search with it and the API answers every listing with it: one
rule, asked directly by both, below the HTTP layer (no HTTP codes here)."""
