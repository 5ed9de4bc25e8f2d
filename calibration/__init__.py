"""`shoe-calibrate`: camera set-up, learning a deck, evaluation and self-tests."""
