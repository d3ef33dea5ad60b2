"""Text shifts: each changes word texts (and, with ``render``, their pixels); boxes and labels stay with their words.

One module per shift, named by its recipe key. Their shared machinery (word
splitting, lexicons, selection, the word budget, edits, value generators,
character edits) is in :mod:`dogood.language`.
"""
