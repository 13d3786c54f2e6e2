#
# Copyright (C) 2009-2020 the sqlparse authors and contributors
# <see AUTHORS file>
#
# This module is part of python-sqlparse and is released under
# the BSD License: https://opensource.org/licenses/BSD-3-Clause

from sqlparse.filters.others import SerializerUnicode
from sqlparse.filters.others import StripCommentsFilter
from sqlparse.filters.others import StripWhitespaceFilter
from sqlparse.filters.others import StripTrailingSemicolonFilter
from sqlparse.filters.others import SpacesAroundOperatorsFilter

from sqlparse.filters.output import OutputPHPFilter
from sqlparse.filters.output import OutputPythonFilter

from sqlparse.filters.tokens import KeywordCaseFilter
from sqlparse.filters.tokens import IdentifierCaseFilter
from sqlparse.filters.tokens import TruncateStringFilter

from sqlparse.filters.reindent import ReindentFilter
from sqlparse.filters.right_margin import RightMarginFilter
from sqlparse.filters.aligned_indent import AlignedIndentFilter

__all__ = [
    'SerializerUnicode',
    'StripCommentsFilter',
    'StripWhitespaceFilter',
    'StripTrailingSemicolonFilter',
    'SpacesAroundOperatorsFilter',

    'OutputPHPFilter',
    'OutputPythonFilter',

    'KeywordCaseFilter',
    'IdentifierCaseFilter',
    'TruncateStringFilter',

    'ReindentFilter',
    'RightMarginFilter',
    'AlignedIndentFilter',
]
