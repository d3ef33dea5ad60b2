"""Text machinery for the text shifts, with no shift in it (as TextAttack splits transformations from constraints).

- :mod:`~dogood.language.words`: one word's punctuation, script and case;
- :mod:`~dogood.language.lexicons`: NLTK stopwords and WordNet, lemminflect, TextAttack (loaded once);
- :mod:`~dogood.language.embeddings`: counter-fitted word vectors;
- :mod:`~dogood.language.selection`: which words may change (labels, answers, roles, neighbours, samples);
- :mod:`~dogood.language.budget`: how many change (exactly ``round(fraction * n)``);
- :mod:`~dogood.language.edits`: replacing, inserting, deleting and reordering words, and redrawing their pixels;
- :mod:`~dogood.language.values`: random dates, numbers, money and Faker values, and a value's data type;
- :mod:`~dogood.language.chars`: character edits (typos, keyboard slips, misspellings, deletions, case);

The shift base classes built on this machinery (word swaps, Moradi & Samwald
samples, form-attack background words) are in ``dogood/shifts/text/_*.py``.
"""
