" Vim syntax file
" Language:  stencilc's stencil language (.stn)
" Reference: dsl/LANGUAGE.md, section 2 (tokens) and 4.8 (built-in names)
"
" The word lists below are those of parser/lexer.re (reserved words) and
" codegen/sema/builtins.c (built-in values, functions, regions and faces, block marks);
" tests/editors/run.sh checks that they stay equal. Built-in names are not
" reserved, so functions are highlighted only where called (`exp(`), and
" region words only before the ':' of a rule, an '&', or in a list
" (`bottom, top:`, `precedence left, right > bottom, top;`).
" Installation: dsl/EDITORS.md.

if exists('b:current_syntax')
  finish
endif
let s:cpo_save = &cpo
set cpo&vim

syntax case match
" Nothing but the folds of `{ }` blocks spans lines.
syntax sync minlines=200

" Characters that are no token (first: everything below wins over them), and
" names with non-ASCII letters (one bad name with the letters and digits after it,
" as the lexer reads it).
syn match stnError "[$%'?@\\`|~.!\x01-\x08\x0e-\x1f\x7f]"
syn match stnError "[^\x01-\x7f]\%([^\x01-\x7f]\|\w\)*"

" Reserved words: parser/lexer.re.
syn keyword stnDeclaration grid fields stencil param let coefficient def precedence mirror residual jacobian initial
syn keyword stnKeyword     points in periodic star box width
syn keyword stnConditional if then else
syn keyword stnLogical     and or not

" Built-in values: codegen/sema/builtins.c, builtin_values.
syn keyword stnBuiltinValue i j k x y z hx hy hz nx ny nz t
syn keyword stnConstant     pi inf true false

" Built-in functions (builtin_funcs), where called; a call of a `def`.
syn keyword stnBuiltinFunc contained abs min max exp log pow sqrt sin cos tan asin acos atan atan2 sinh cosh tanh floor ceil mod
syn match   stnFunction "\<\h\w*\ze\s*(" contains=stnBuiltinFunc

" Regions (region_words) and faces (face_names), where they name regions.
syn keyword stnRegion contained interior boundary all left right bottom top front back
syn match   stnRegionUse "\<\h\w*\ze\s*[:&,>;]" transparent contains=stnRegion

" The mark of an approximate jacobian block (block_marks), before its '{'.
syn keyword stnMark    contained approximate
syn match   stnMarkUse "\<\h\w*\ze\s*{" transparent contains=stnMark

" Operators; '!' alone is no operator.
syn match stnOperator "[-+*/^<>=&]"
syn match stnOperator "[=!<>]="

" Numbers: an integer, a real, or a number run into a letter, '_' or '.' (`2x`, `1..2`).
syn match stnInteger   "[A-Za-z0-9_]\@1<!\d\+"
syn match stnFloat     "[A-Za-z0-9_]\@1<!\%(\d\+\.\d*\%([eE][-+]\=\d\+\)\=\|\.\d\+\%([eE][-+]\=\d\+\)\=\|\d\+[eE][-+]\=\d\+\)"
syn match stnBadNumber "[A-Za-z0-9_]\@1<!\%(\d\+\.\d*\%([eE][-+]\=\d\+\)\=\|\.\d\+\%([eE][-+]\=\d\+\)\=\|\d\+[eE][-+]\=\d\+\|\d\+\)\@>[A-Za-z_.][A-Za-z0-9_.]*"

" Strings (descriptions): one line, escapes \" and \\ only.
syn match  stnBadEscape contained "\\."
syn match  stnEscape    contained "\\[\\\"]"
syn region stnString start=+"+ skip=+\\.+ end=+"+ oneline contains=stnEscape,stnBadEscape,@Spell
syn match  stnUnterminated +"\%([^"\\]\|\\.\)*\\\=$+

" Comments.
syn keyword stnTodo    contained TODO FIXME XXX
syn match   stnComment "#.*$" contains=stnTodo,@Spell

" Blocks fold.
syn region stnBlock start="{" end="}" transparent fold

hi def link stnDeclaration  Statement
hi def link stnKeyword      Keyword
hi def link stnConditional  Conditional
hi def link stnLogical      Operator
hi def link stnBuiltinValue Identifier
hi def link stnConstant     Constant
hi def link stnBuiltinFunc  Function
hi def link stnFunction     Function
hi def link stnRegion       Label
hi def link stnMark         StorageClass
hi def link stnOperator     Operator
hi def link stnInteger      Number
hi def link stnFloat        Float
hi def link stnString       String
hi def link stnEscape       SpecialChar
hi def link stnComment      Comment
hi def link stnTodo         Todo
hi def link stnError        Error
hi def link stnBadNumber    Error
hi def link stnBadEscape    Error
hi def link stnUnterminated Error

let b:current_syntax = 'stn'
let &cpo = s:cpo_save
unlet s:cpo_save
