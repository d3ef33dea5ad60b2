"""Image shifts (one per file, named by its recipe key): the page's pixels change, boxes are re-projected or re-read."""
