"""Data preparation: the project's own demo corpus and the thesis's Tatoeba preprocessing."""
