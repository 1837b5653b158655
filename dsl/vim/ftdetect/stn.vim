" .stn files are stencilc programs (dsl/LANGUAGE.md).
autocmd BufNewFile,BufRead *.stn set filetype=stn
