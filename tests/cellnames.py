"""A spreadsheet column's letters, with no dependency: read by the cell reader (``xlsxcells``) and by
the Calc driver (``lo_uno``, run by the system Python that has only LibreOffice's ``uno``)."""


def letters(column: int) -> str:
    """A column's letters (1 = A)."""
    s = ""
    while column:
        column, r = divmod(column - 1, 26)
        s = chr(65 + r) + s
    return s
