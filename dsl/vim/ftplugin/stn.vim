" Vim filetype plugin for stencilc's stencil language (.stn): comments
" start with '#' and run to the end of the line.
if exists('b:did_ftplugin')
  finish
endif
let b:did_ftplugin = 1

setlocal comments=:# commentstring=#\ %s
setlocal formatoptions-=t formatoptions+=croql

let b:undo_ftplugin = 'setlocal comments< commentstring< formatoptions<'
