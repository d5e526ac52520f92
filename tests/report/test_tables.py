"""report.tables: the one Markdown table writer prints cells as given, aligns as asked, refuses ragged rows."""

import pytest

from rlperf.report.tables import markdown_table


def test_cells_print_as_given_with_the_alignment_asked():
    lines = markdown_table(["name", "ms"], [["a", "0.100"], ["bb", "12.000"]], align="lr")
    assert lines == ["| name   |     ms |",
                     "|:-------|-------:|",
                     "| a      |  0.100 |",
                     "| bb     | 12.000 |"]


def test_none_prints_as_a_dash_and_a_pipe_in_a_cell_is_escaped():
    lines = markdown_table(["a", "b"], [["x|y", None]])
    assert lines[2].split() == ["|", r"x\|y", "|", "-", "|"]


def test_no_rows_leaves_the_header_and_its_rule():
    assert [line.split() for line in markdown_table(["a", "b"], [])] == [["|", "a", "|", "b", "|"],
                                                                         ["|-----|-----|"]]


@pytest.mark.parametrize("align", ["l", "lx", "lrl"])
def test_an_align_string_that_does_not_fit_the_columns_is_refused(align):
    with pytest.raises(ValueError, match="one of l, r, c for each of the 2 columns"):
        markdown_table(["a", "b"], [["1", "2"]], align=align)


def test_a_row_with_the_wrong_number_of_cells_is_refused():
    with pytest.raises(ValueError, match="row 1 has 1 cells for 2 columns"):
        markdown_table(["a", "b"], [["1", "2"], ["3"]])
