"""Layout shifts (one per file, named by its recipe key): boxes, reading order and word placement change, text and labels stay."""
