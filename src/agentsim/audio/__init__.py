"""Audio for doubles: pcm16 generation and chunking (``pcm``)."""
